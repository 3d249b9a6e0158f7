"""A GPU (or unified-memory system) in the catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Huawei: Ascend NPUs (no CUDA/ROCm; llama.cpp CANN backend or vLLM-Ascend).
Vendor = Literal["NVIDIA", "AMD", "Intel", "Apple", "Huawei"]
# consumer: GeForce/Radeon/Arc desktop cards, usually driving a display on Windows;
# workstation: RTX A/Ada/PRO, Radeon PRO; datacenter: Tesla/A100/H100/Instinct/Gaudi (headless);
# embedded: Jetson; soc: Apple silicon, Strix Halo, DGX Spark (unified memory systems).
Segment = Literal["consumer", "workstation", "datacenter", "embedded", "soc"]


@dataclass(frozen=True, slots=True)
class Gpu:
    id: str  # stable catalog id, e.g. "tesla-v100-32g-pcie"
    vendor: Vendor
    name: str  # display name, e.g. "Tesla V100 PCIe 32GB"
    aliases: tuple[str, ...]  # what people type: "V100 32G", "魔改2080ti 22g"
    memory_gib: float  # default memory size (marketed GB as GiB, as every tool does)
    bandwidth_gbs: float  # peak DRAM/HBM bandwidth, decimal GB/s
    arch: str  # marketing architecture, e.g. "Volta", "Ada Lovelace", "RDNA3"
    arch_family: str  # calibration group key: "pascal", "volta", "turing", "ampere", "ada", ...
    segment: Segment
    year: int | None = None
    memory_type: str = ""
    # Other sizes the same chip ships in (Apple, Strix Halo, modded cards); includes memory_gib.
    memory_options_gib: tuple[float, ...] = ()
    unified_memory: bool = False
    fp16_tflops: float | None = None  # dense FP16 matrix peak (tensor cores where present)
    # GeForce cards run FP16 with FP32 accumulate at half the listed tensor rate.
    fp16_fp32acc_half_rate: bool = False
    int8_tops: float | None = None
    # Peak non-tensor FP32 (shader) rate at boost clock. Prefill on cards without usable FP16/tensor
    # paths (Pascal, and llama.cpp kernels that fall back to FP32 math) is bounded by this instead.
    fp32_tflops: float | None = None
    compute_capability: float | None = None  # CUDA only, e.g. 7.0 for Volta
    gfx_target: str | None = None  # ROCm only, e.g. "gfx906"
    form: str = ""
    tdp_w: int | None = None
    notes: str = ""
    source: str = ""
