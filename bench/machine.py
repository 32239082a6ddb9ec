"""What machine a bench ran on: CPU model and vendor, the ISA extensions that change which
kernels are fastest (AVX2, AVX-512, AVX-512 BF16/VNNI, AMX), cores and threads. Results from
different CPU kinds are kept apart (docs/performance.md has one table per kind)."""
import os
import platform

# /proc/cpuinfo flag -> the name reports use
ISA_FLAGS = {"avx2": "AVX2", "fma": "FMA", "avx512f": "AVX-512", "avx512_vnni": "AVX-512 VNNI",
             "avx512_bf16": "AVX-512 BF16", "avx512_fp16": "AVX-512 FP16", "amx_tile": "AMX",
             "amx_bf16": "AMX BF16", "amx_int8": "AMX INT8"}


def _cpuinfo(path="/proc/cpuinfo"):
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def kind(vendor, flags=()):
    """The CPU kind results are grouped by: the vendor (amd, intel, else the vendor string) and
    the widest matrix/vector unit kernels pick paths by (amx, avx512, avx2): a Zen 3 and a Zen 4,
    or a Xeon with and without AMX, choose different kernels and get tables of their own."""
    vendor_kind = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(vendor, vendor.lower() or platform.machine())
    flags = set(flags)
    unit = "amx" if "amx_tile" in flags else "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else ""
    return f"{vendor_kind}-{unit}" if unit else vendor_kind


def describe(threads=None, cpuinfo=None):
    info = _cpuinfo() if cpuinfo is None else cpuinfo
    flags = set(info.get("flags", "").split())
    vendor = info.get("vendor_id", "")
    return {
        "model": info.get("model name") or platform.processor() or platform.machine(),
        "vendor": vendor,
        "kind": kind(vendor, flags),
        "isa": [name for flag, name in ISA_FLAGS.items() if flag in flags],
        "logical_cpus": os.cpu_count(),
        "threads": threads or os.cpu_count(),
    }


def summary(machine):
    """One line: 'AMD EPYC (amd), AVX2 FMA AVX-512 ..., no AMX, 2 CPUs, 2 threads'."""
    isa = " ".join(machine["isa"]) or "no AVX2"
    amx = "" if "AMX" in machine["isa"] else ", no AMX"
    return (f"{machine['model']} ({machine['kind']}), {isa}{amx}, {machine['logical_cpus']} CPUs, "
            f"{machine['threads']} threads")
