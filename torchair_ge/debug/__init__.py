"""Debugging and profiling helpers (docs/debugging.md):

- compare_with_eager(model, *inputs): the first FX node whose graph output differs from eager
- profile_report() / write_profile(): what config.profiling.enable recorded
- load_data_dump(dir): the .npy files config.debug.data_dump wrote, by node
"""
from torchair_ge.debug.compare import CompareReport, compare_with_eager, load_data_dump
from torchair_ge.debug.profiling import ProfileReport, write_profile
from torchair_ge.debug.profiling import report as profile_report

__all__ = ["CompareReport", "ProfileReport", "compare_with_eager", "load_data_dump", "profile_report",
           "write_profile"]
