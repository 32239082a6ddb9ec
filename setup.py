"""Builds torchair_ge._C with CMake against the installed torch (use --no-build-isolation)."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        import torch.utils  # the installed torch; never a build-isolated copy

        build_dir = os.environ.get("TORCHAIR_GE_BUILD_DIR", os.path.join(ROOT, "build"))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call([
                "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}",
                f"-DPython3_EXECUTABLE={sys.executable}", "-DTORCHAIR_GE_WERROR=OFF",
            ])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_C"])
        built = [f for f in os.listdir(os.path.join(ROOT, "torchair_ge")) if f.startswith("_C") and f.endswith(".so")]
        target = self.get_ext_fullpath(ext.name)
        source = os.path.join(ROOT, "torchair_ge", built[0])
        if os.path.abspath(source) != os.path.abspath(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target)


setup(ext_modules=[CMakeExtension("torchair_ge._C")], cmdclass={"build_ext": CMakeBuild})
