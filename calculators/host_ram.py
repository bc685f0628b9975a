"""Host RAM when the model is loaded: which loads make every data-parallel process hold its own copy of the weights.

Why a calculator: "内存不足" or "Killed" while loading a 70B model on 16 GPUs per node is one multiplication people
do not make. ``torchrun`` / ``accelerate launch`` / ``deepspeed`` start one process per GPU and each runs
``from_pretrained``. Whether each then holds a private copy was measured (``bench/host_ram_load.py``, transformers
4.36–5.23, torch 2.13): a load that converts the checkpoint's dtype — fp32 from a 16-bit checkpoint, the transformers
4.x default without ``torch_dtype`` — holds 4 bytes per parameter in every process; a 16-bit load holds 2 per process
before transformers 4.43, while from 4.43 a load in the checkpoint's own dtype keeps the weights mapped from the file
(one copy per node in the page cache, shared by its processes). So a node needs processes × 4 bytes × parameters in
fp32, processes × 2 bytes in 16-bit before 4.43, and about one 16-bit copy from 4.43.

Not counted: the Python processes, the tokenised dataset, and the RAM CPU offload needs during training
(``calculators.deepspeed``'s estimators). DeepSpeed ZeRO-3 ``zero.Init`` and accelerate's FSDP
``fsdp_cpu_ram_efficient_loading`` also avoid the per-process copy (knowledge card host-ram-load-scales-with-processes).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from .i18n import t
from .lang import Lang
from .validate import positive_float, positive_int

MAX_PARAMS = 1e13
MAX_PROCESSES = 1024
MAX_HOST_RAM_GB = 1e6
GIB = 2**30


class HostRamLoad(BaseModel):
    """A node's host RAM at load: in fp32 and in 16-bit before transformers 4.43 every process holds its own copy; from
    4.43 a 16-bit load of a 16-bit checkpoint shares one mapped copy per node."""

    num_params: float
    processes_per_node: int | None = Field(
        None, description="Processes (GPUs) per node as stated; None: not stated, the figures are per process."
    )
    host_ram_gb: float | None = Field(None, description="The node's RAM the user stated (GB), if any.")
    copy_16bit_bytes: int
    copy_fp32_bytes: int
    node_fp32_bytes: int = Field(description="processes_per_node × copy_fp32_bytes")
    node_16bit_private_bytes: int = Field(description="processes_per_node × copy_16bit_bytes (transformers < 4.43)")
    node_16bit_shared_bytes: int = Field(description="one copy_16bit_bytes per node (transformers >= 4.43)")
    fits_fp32: bool | None = Field(None, description="node_fp32_bytes within host_ram_gb; None without it.")
    fits_16bit_private: bool | None = None
    fits_16bit_shared: bool | None = None

    def to_markdown(self, lang: Lang = "en") -> str:
        def cap(fits: bool | None) -> str:
            if self.host_ram_gb is None or fits is None:
                return ""
            return t("host_ram_within" if fits else "host_ram_over", lang, cap=f"{self.host_ram_gb:,.0f}")

        if self.processes_per_node is None:
            return t(
                "host_ram_load_per_process",
                lang,
                params=f"{self.num_params / 1e9:.3g}B",
                c32=f"{self.copy_fp32_bytes / GIB:,.1f}",
                cap32=cap(self.fits_fp32),
                c16=f"{self.copy_16bit_bytes / GIB:,.1f}",
                cap16=cap(self.fits_16bit_private),
            )
        return t(
            "host_ram_load",
            lang,
            procs=self.processes_per_node,
            params=f"{self.num_params / 1e9:.3g}B",
            c32=f"{self.copy_fp32_bytes / GIB:,.1f}",
            n32=f"{self.node_fp32_bytes / GIB:,.1f}",
            cap32=cap(self.fits_fp32),
            c16=f"{self.copy_16bit_bytes / GIB:,.1f}",
            n16=f"{self.node_16bit_private_bytes / GIB:,.1f}",
            cap16=cap(self.fits_16bit_private),
        )


def host_ram_at_load(
    num_params: float, processes_per_node: int | None = None, host_ram_gb: float | None = None
) -> HostRamLoad:
    """Host RAM one node needs while each of its ``processes_per_node`` processes loads a model with ``num_params``
    parameters (see the module docstring for which loads copy); compared with ``host_ram_gb`` (GB, read as GiB).
    Without ``processes_per_node`` (the user did not say how many GPUs load it) the figures are one process's copy,
    never a count of processes nobody stated."""
    params = positive_float("num_params", num_params, maximum=MAX_PARAMS)
    stated = (
        None
        if processes_per_node is None
        else positive_int("processes_per_node", processes_per_node, maximum=MAX_PROCESSES)
    )
    procs = stated or 1
    ram = None if host_ram_gb is None else positive_float("host_ram_gb", host_ram_gb, maximum=MAX_HOST_RAM_GB)
    copy16, copy32 = round(params * 2), round(params * 4)

    def fits(need: int) -> bool | None:
        return None if ram is None else need <= ram * GIB

    return HostRamLoad(
        num_params=params,
        processes_per_node=stated,
        host_ram_gb=ram,
        copy_16bit_bytes=copy16,
        copy_fp32_bytes=copy32,
        node_fp32_bytes=procs * copy32,
        node_16bit_private_bytes=procs * copy16,
        node_16bit_shared_bytes=copy16,
        fits_fp32=fits(procs * copy32),
        fits_16bit_private=fits(procs * copy16),
        fits_16bit_shared=fits(copy16),
    )
