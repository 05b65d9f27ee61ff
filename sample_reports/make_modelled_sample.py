"""Write MODELLED_decode-gemm-sweep_H100-SXM.csv: a MODELLED (not measured) ncu `--page raw` CSV.

No GPU ran anything to make this file. Every number in it follows from the assumptions below,
so the tool's commands have a realistic input until real captures exist. The word MODELLED is in
the file name, the device name, the process name and the host name, so every output built from
it says so. Run `python sample_reports/make_modelled_sample.py` (standard library only); it
rewrites the CSV next to this script, byte for byte the same every time.

Workload (a decode-style linear layer)
  A1. One bf16 weight matrix of 8,192 output features x 8,192 input features (M = K = 8,192),
      2 bytes per element, shared by a batch of N tokens; N = 1, 4, 16, 64, 256, 1,024.
      One kernel per batch size: 6 kernels, `gemm_bf16_decode_n1` ... `gemm_bf16_decode_n1024`.
  A2. Tensor work: 2 x N x 8,192 x 8,192 operations (one multiply-add = 2), counted in
      `sm__ops_path_tensor_src_bf16_dst_fp32.sum` (unit empty, as Nsight Compute writes it).
  A3. CUDA-core work: an FP32 epilogue of one FMUL per output element, N x 8,192 FMUL
      (`smsp__sass_thread_inst_executed_op_fmul_pred_on.sum`); FADD and FFMA counts are 0; the
      FP64 (dadd, dmul, dfma) and FP16 (hadd, hmul, hfma) counts are 0.

Device (NVIDIA H100 SXM5 80GB)
  D1. Name "NVIDIA H100 80GB HBM3 (MODELLED)", compute capability 9.0, 132 SMs. The name is
      written both in the `Device` column (real exports hold the device ordinal "0" there; a
      name wins in the reader) and in `device__attribute_display_name`.
  D2. SM, L1TEX and L2 (lts) clocks 1.755 GHz; DRAM clock 2.619 GHz.
  D3. DRAM peak 1,280 byte/cycle (`dram__bytes.sum.peak_sustained`) x 2.619 GHz = 3.352 TB/s.
  D4. L2 -> SM peak 5,120 byte/cycle (`derived__lts__lts2xbar_bytes.sum.peak_sustained`)
      x 1.755 GHz = 8.986 TB/s.
  D5. L1 peak 16,896 byte/cycle = 132 SMs x 128 B
      (`derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained`) x 1.755 GHz.
  D6. Per-cycle instruction peaks (`sm__sass_thread_inst_executed_op_<op>_pred_on.sum
      .peak_sustained`): FFMA 16,896, DFMA 8,448, HFMA 16,896 thread-inst/cycle.
  D7. Tensor peak 540,672 ops/cycle = 132 SMs x 4,096 dense bf16 ops per SM-cycle
      (`sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained`), x 1.755 GHz = 948.9
      TFLOP/s. This is the dense rate; a real Hopper capture may store twice that for this
      path (the 2:4-sparse rate), and the `op_hgmma_..._sparsity_off` path holds the dense one.

Traffic
  T1. DRAM read = the weight once (8,192 x 8,192 x 2 B) + the activations once (N x 8,192 x 2 B)
      (`dram__bytes_read.sum`); DRAM write = the output once (N x 8,192 x 2 B)
      (`dram__bytes_write.sum`).
  T2. L2 -> SM bytes: 128 x 128 output tiles (grid 64 feature tiles x ceil(N/128) token tiles),
      grouped in thread-block clusters of up to 2 x 2 whose TMA multicast shares each loaded
      tile, so L2 serves each weight tile once per 256-token block and each activation row
      block once per 256 output features:
          weight x ceil(N / 256) + activations x (8,192 / 256) + output.
      (Without multicast, 128 x 128 tiles would need weight x ceil(N/128) + activations x 64:
      more than the L2 roof allows in the durations of D8 at N = 256 and 1,024, which the
      tool rightly flags as a point above its roof.)
      Stored as a rate, `derived__lts__lts2xbar_bytes.sum.per_second` = bytes / duration.
  T3. L1 bytes = L2 bytes (the tensor-core loads go through shared memory, with no L1 reuse),
      stored as `derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second`.

Time
  D8. Duration = max(DRAM bytes / (0.80 x DRAM peak), tensor ops / (0.65 x tensor peak))
      + 3.0 us of fixed launch and tail latency, rounded to whole nanoseconds as Nsight
      Compute measures it (`gpu__time_duration.sum`).
  D9. `sm__cycles_elapsed.avg` = `smsp__cycles_elapsed.avg` = duration x SM clock; the clocks
      are stored as `<unit>__cycles_elapsed.avg.per_second` for sm, smsp, l1tex, lts and dram.

Format (what `ncu --csv --page raw` writes)
  F1. `==PROF==` lines first (process 4242, "MODELLED-decode-sweep"), then the header row:
      the identity columns "ID","Process ID","Process Name","Host Name","Kernel Name",
      "Context","Stream","Block Size","Grid Size","Device","CC", then the metric names sorted;
      then the units row (empty under the identity columns); then one row per kernel. Every
      field double-quoted, `\\n` line ends, UTF-8.
  F2. Auto-scaled units chosen per column (one units row serves every kernel): the largest
      prefix that keeps the column's largest value at or above 1 (time in usecond, bytes in
      Mbyte, byte rates in Tbyte/second, clocks in Ghz); per-cycle peaks in byte/cycle and
      inst/cycle; counts unscaled.
  F3. Whole numbers are written whole; others with 9 significant digits (more than ncu's
      usual 2-3 decimals, so the analysis reproduces the model to about 1e-8); numbers of
      1,000 or more with `,` thousands separators.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "MODELLED_decode-gemm-sweep_H100-SXM.csv"

# A1-A3: the workload.
BATCHES = (1, 4, 16, 64, 256, 1024)
OUT_FEATURES = 8192  # M
IN_FEATURES = 8192  # K
BYTES_PER_ELEMENT = 2  # bf16

# D1-D7: the device.
DEVICE_NAME = "NVIDIA H100 80GB HBM3 (MODELLED)"
CC_MAJOR, CC_MINOR = 9, 0
SM_COUNT = 132
SM_CLOCK_HZ = 1.755e9
L1TEX_CLOCK_HZ = 1.755e9
LTS_CLOCK_HZ = 1.755e9
DRAM_CLOCK_HZ = 2.619e9
DRAM_BYTES_PER_CYCLE = 1280
L2_BYTES_PER_CYCLE = 5120
L1_BYTES_PER_CYCLE = SM_COUNT * 128
FFMA_PER_CYCLE = 16896
DFMA_PER_CYCLE = 8448
HFMA_PER_CYCLE = 16896
TENSOR_OPS_PER_SM_CYCLE = 4096
TENSOR_OPS_PER_CYCLE = SM_COUNT * TENSOR_OPS_PER_SM_CYCLE

# T2: tiling.
TILE = 128  # output tile edge (tokens and features)
CLUSTER = 2  # CTAs per cluster edge sharing a tile through TMA multicast

# D8: timing.
DRAM_EFFICIENCY = 0.80
TENSOR_EFFICIENCY = 0.65
LAUNCH_LATENCY_S = 3.0e-6

# F1-F3: format.
PROCESS_ID = "4242"
PROCESS_NAME = "MODELLED-decode-sweep"
HOST_NAME = "modelled"
CONTEXT = "1"
STREAM = "7"
BLOCK_DIM = (256, 1, 1)
SIGNIFICANT_DIGITS = 9

IDENTITY_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                    "Stream", "Block Size", "Grid Size", "Device", "CC")

# Unit families ncu auto-scales, smallest first: (unit as written, its size in SI units).
SCALES: dict[str, tuple[tuple[str, float], ...]] = {
    "time": (("nsecond", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("second", 1.0)),
    "bytes": (("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Tbyte", 1e12)),
    "rate": (("byte/second", 1.0), ("Kbyte/second", 1e3), ("Mbyte/second", 1e6),
             ("Gbyte/second", 1e9), ("Tbyte/second", 1e12)),
    "clock": (("hz", 1.0), ("Khz", 1e3), ("Mhz", 1e6), ("Ghz", 1e9)),
}

# Metric -> unit family (auto-scaled) or the unit written as is.
METRIC_UNITS: dict[str, str] = {
    "device__attribute_display_name": "",
    "device__attribute_compute_capability_major": "",
    "device__attribute_compute_capability_minor": "",
    "device__attribute_multiprocessor_count": "",
    "launch__grid_dim_x": "", "launch__grid_dim_y": "", "launch__grid_dim_z": "",
    "launch__block_dim_x": "block", "launch__block_dim_y": "block", "launch__block_dim_z": "block",
    "gpu__time_duration.sum": "time",
    "sm__cycles_elapsed.avg": "cycle",
    "smsp__cycles_elapsed.avg": "cycle",
    "sm__cycles_elapsed.avg.per_second": "clock",
    "smsp__cycles_elapsed.avg.per_second": "clock",
    "l1tex__cycles_elapsed.avg.per_second": "clock",
    "lts__cycles_elapsed.avg.per_second": "clock",
    "dram__cycles_elapsed.avg.per_second": "clock",
    "dram__bytes_read.sum": "bytes",
    "dram__bytes_write.sum": "bytes",
    "dram__bytes.sum.peak_sustained": "byte/cycle",
    "derived__lts__lts2xbar_bytes.sum.per_second": "rate",
    "derived__lts__lts2xbar_bytes.sum.peak_sustained": "byte/cycle",
    "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second": "rate",
    "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained": "byte/cycle",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum": "",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained": "",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": "inst/cycle",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": "inst/cycle",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": "inst/cycle",
    **{f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum": "inst"
       for op in ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")},
}


@dataclass(frozen=True)
class ModelledKernel:
    """One batch size's modelled work, traffic and time, in SI units (FLOP, bytes, seconds)."""

    batch: int
    tensor_ops: int
    fmul: int
    dram_read_bytes: int
    dram_write_bytes: int
    l2_bytes: int
    duration_ns: int

    @property
    def name(self) -> str:
        return f"gemm_bf16_decode_n{self.batch}"

    @property
    def duration_s(self) -> float:
        return self.duration_ns * 1e-9

    @property
    def grid(self) -> tuple[int, int, int]:
        return (OUT_FEATURES // TILE, math.ceil(self.batch / TILE), 1)


def dram_peak_bytes_per_s() -> float:
    """D3: the DRAM roof."""
    return DRAM_BYTES_PER_CYCLE * DRAM_CLOCK_HZ


def tensor_peak_ops_per_s() -> float:
    """D7: the dense bf16 tensor roof."""
    return TENSOR_OPS_PER_CYCLE * SM_CLOCK_HZ


def model_kernel(batch: int) -> ModelledKernel:
    """A1-A3, T1-T3 and D8 for a batch of `batch` tokens."""
    weight = OUT_FEATURES * IN_FEATURES * BYTES_PER_ELEMENT
    activations = batch * IN_FEATURES * BYTES_PER_ELEMENT
    output = batch * OUT_FEATURES * BYTES_PER_ELEMENT
    tensor_ops = 2 * batch * OUT_FEATURES * IN_FEATURES
    shared = TILE * CLUSTER  # rows/features one multicast load serves
    l2_bytes = weight * math.ceil(batch / shared) + activations * (OUT_FEATURES // shared) + output
    dram_bytes = weight + activations + output
    busy_s = max(dram_bytes / (DRAM_EFFICIENCY * dram_peak_bytes_per_s()),
                 tensor_ops / (TENSOR_EFFICIENCY * tensor_peak_ops_per_s()))
    duration_ns = round((busy_s + LAUNCH_LATENCY_S) * 1e9)
    return ModelledKernel(batch, tensor_ops, batch * OUT_FEATURES, weight + activations, output,
                          l2_bytes, duration_ns)


def kernel_metrics(k: ModelledKernel) -> dict[str, float | str]:
    """Every metric of one kernel, in SI units (strings for names)."""
    d = k.duration_s
    metrics: dict[str, float | str] = {
        "device__attribute_display_name": DEVICE_NAME,
        "device__attribute_compute_capability_major": CC_MAJOR,
        "device__attribute_compute_capability_minor": CC_MINOR,
        "device__attribute_multiprocessor_count": SM_COUNT,
        "gpu__time_duration.sum": d,
        "sm__cycles_elapsed.avg": d * SM_CLOCK_HZ,
        "smsp__cycles_elapsed.avg": d * SM_CLOCK_HZ,
        "sm__cycles_elapsed.avg.per_second": SM_CLOCK_HZ,
        "smsp__cycles_elapsed.avg.per_second": SM_CLOCK_HZ,
        "l1tex__cycles_elapsed.avg.per_second": L1TEX_CLOCK_HZ,
        "lts__cycles_elapsed.avg.per_second": LTS_CLOCK_HZ,
        "dram__cycles_elapsed.avg.per_second": DRAM_CLOCK_HZ,
        "dram__bytes_read.sum": k.dram_read_bytes,
        "dram__bytes_write.sum": k.dram_write_bytes,
        "dram__bytes.sum.peak_sustained": DRAM_BYTES_PER_CYCLE,
        "derived__lts__lts2xbar_bytes.sum.per_second": k.l2_bytes / d,
        "derived__lts__lts2xbar_bytes.sum.peak_sustained": L2_BYTES_PER_CYCLE,
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second": k.l2_bytes / d,
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained": L1_BYTES_PER_CYCLE,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": k.tensor_ops,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained": TENSOR_OPS_PER_CYCLE,
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": FFMA_PER_CYCLE,
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": DFMA_PER_CYCLE,
        "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained": HFMA_PER_CYCLE,
    }
    for op in ("dadd", "dmul", "dfma", "fadd", "ffma", "hadd", "hmul", "hfma"):
        metrics[f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"] = 0
    metrics["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"] = k.fmul
    for axis, value in zip("xyz", k.grid, strict=False):
        metrics[f"launch__grid_dim_{axis}"] = value
    for axis, value in zip("xyz", BLOCK_DIM, strict=False):
        metrics[f"launch__block_dim_{axis}"] = value
    return metrics


def format_number(value: float) -> str:
    """F3: whole numbers whole, others to 9 significant digits; `,` between thousands."""
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    exponent = int(f"{value:.{SIGNIFICANT_DIGITS - 1}e}".split("e")[1])
    decimals = max(0, SIGNIFICANT_DIGITS - 1 - exponent)
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def column_unit(family: str, values: list[float]) -> tuple[str, float]:
    """F2: (unit to write, its size in SI) for one column; non-scaled units are written as is."""
    scales = SCALES.get(family)
    if scales is None:
        return family, 1.0
    largest = max(abs(v) for v in values)
    chosen = scales[0]
    for scale in scales:
        if largest >= scale[1]:
            chosen = scale
    return chosen


def _triple(values: tuple[int, int, int]) -> str:
    return f"({values[0]}, {values[1]}, {values[2]})"


def rows(kernels: list[ModelledKernel]) -> list[list[str]]:
    """F1-F3: the header row, the units row and one row per kernel, as strings."""
    per_kernel = [kernel_metrics(k) for k in kernels]
    names = sorted(METRIC_UNITS)
    units: list[str] = []
    sizes: list[float] = []
    for name in names:
        values = [float(m[name]) for m in per_kernel if not isinstance(m[name], str)]
        unit, size = column_unit(METRIC_UNITS[name], values) if values else (METRIC_UNITS[name], 1.0)
        units.append(unit)
        sizes.append(size)
    out = [[*IDENTITY_COLUMNS, *names], [""] * len(IDENTITY_COLUMNS) + units]
    for index, (k, metrics) in enumerate(zip(kernels, per_kernel, strict=False)):
        identity = [str(index), PROCESS_ID, PROCESS_NAME, HOST_NAME, k.name, CONTEXT, STREAM,
                    _triple(BLOCK_DIM), _triple(k.grid), DEVICE_NAME, f"{CC_MAJOR}.{CC_MINOR}"]
        cells = []
        for name, size in zip(names, sizes, strict=False):
            value = metrics[name]
            cells.append(value if isinstance(value, str) else format_number(value / size))
        out.append(identity + cells)
    return out


def render(kernels: list[ModelledKernel] | None = None) -> str:
    """The whole CSV text, `==PROF==` lines included."""
    kernels = kernels if kernels is not None else [model_kernel(n) for n in BATCHES]
    lines = [f"==PROF== Connected to process {PROCESS_ID} ({PROCESS_NAME})\n"]
    lines += [f'==PROF== Profiling "{k.name}" - {i}: 0%....50%....100% - 1 pass\n'
              for i, k in enumerate(kernels)]
    lines.append(f"==PROF== Disconnected from process {PROCESS_ID}\n")

    table = io.StringIO()
    csv.writer(table, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows(kernels))
    return "".join(lines) + table.getvalue()


def write_sample(path: str | Path) -> Path:
    """Write the MODELLED CSV at `path` (a file, or a folder to hold FILE_NAME); returns the file."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAME
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(render())
    return path


def main(out_dir: str | Path | None = None) -> Path:
    """Write the CSV into `out_dir` (default: this script's folder) and say where."""
    target = write_sample(Path(out_dir) if out_dir is not None else Path(__file__).resolve().parent)
    print(f"Wrote {target} (MODELLED, not measured)")
    return target


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
