"""What machine a bench ran on: CPU model and vendor, the ISA extensions that change which
kernels are fastest (AVX2, AVX-512, AVX-512 BF16/VNNI, AMX), cores and threads, the CPU family
and model numbers (a VM's model name is often only "Intel(R) Xeon(R) Processor") and the cache
sizes (a model whose weights fit a large shared L3 runs above the DRAM bandwidth when alone).
Results from different CPU kinds are kept apart (docs/performance.md has one table per kind)."""
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


CACHE_ROOT = "/sys/devices/system/cpu/cpu0/cache"
_SIZE_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def caches(root=CACHE_ROOT):
    """The first CPU's data and unified caches as {"L1d": bytes, "L2": bytes, "L3": bytes} (those
    the kernel reports; {} where there is no such directory)."""
    sizes = {}
    try:
        entries = sorted(e for e in os.listdir(root) if e.startswith("index"))
    except OSError:
        return sizes
    for entry in entries:
        try:
            fields = {}
            for name in ("level", "type", "size"):
                with open(os.path.join(root, entry, name)) as f:
                    fields[name] = f.read().strip()
        except OSError:
            continue
        number, unit = fields["size"][:-1], _SIZE_UNITS.get(fields["size"][-1:])
        if fields["type"] == "Instruction" or not number.isdigit() or unit is None:
            continue
        sizes[f"L{fields['level']}" + ("d" if fields["type"] == "Data" else "")] = int(number) * unit
    return sizes


def _mib(size):
    return f"{size / (1 << 20):g} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def kind(vendor, flags=()):
    """The CPU kind results are grouped by: the vendor (amd, intel, else the vendor string) and
    the widest matrix/vector unit kernels pick paths by (amx, avx512, avx2): a Zen 3 and a Zen 4,
    or a Xeon with and without AMX, choose different kernels and get tables of their own."""
    vendor_kind = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(vendor, vendor.lower() or platform.machine())
    flags = set(flags)
    unit = "amx" if "amx_tile" in flags else "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else ""
    return f"{vendor_kind}-{unit}" if unit else vendor_kind


def describe(threads=None, cpuinfo=None, cache_root=CACHE_ROOT):
    info = _cpuinfo() if cpuinfo is None else cpuinfo
    flags = set(info.get("flags", "").split())
    vendor = info.get("vendor_id", "")
    return {
        "model": info.get("model name") or platform.processor() or platform.machine(),
        "vendor": vendor,
        "kind": kind(vendor, flags),
        "isa": [name for flag, name in ISA_FLAGS.items() if flag in flags],
        "family": info.get("cpu family", ""),
        "model_number": info.get("model", ""),
        "caches": caches(cache_root),
        "logical_cpus": os.cpu_count(),
        "threads": threads or os.cpu_count(),
    }


def summary(machine):
    """One line: 'AMD EPYC (amd, family 25 model 17), AVX2 FMA AVX-512 ..., no AMX, L2 1 MiB, L3 32 MiB,
    2 CPUs, 2 threads' (results written before the family and caches were recorded lack them)."""
    isa = " ".join(machine["isa"]) or "no AVX2"
    amx = "" if "AMX" in machine["isa"] else ", no AMX"
    numbers = f", family {machine['family']} model {machine['model_number']}" if machine.get("family") else ""
    cache = "".join(f", {level} {_mib(size)}" for level, size in sorted(machine.get("caches", {}).items())
                    if level != "L1d")
    return (f"{machine['model']} ({machine['kind']}{numbers}), {isa}{amx}{cache}, {machine['logical_cpus']} CPUs, "
            f"{machine['threads']} threads")
