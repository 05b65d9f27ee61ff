"""Ceilings and diagnosis: hand-computed factors, and what the real counters say."""

from __future__ import annotations

import math

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.kernel import analyse_kernel

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")


def by_kind(model, kind: str, roof: str | None = None):
    found = [c for c in model.ceilings if c.kind == kind and (roof is None or c.roof == roof)]
    assert len(found) == 1, [(c.kind, c.roof) for c in model.ceilings]
    return found[0]


def instruction_metrics() -> dict:
    m = base_metrics()  # FP32: ffma 1e6, fadd 2e5, fmul 3e5 thread instructions
    m.update({
        "smsp__inst_executed.sum": (250_000.0, "inst"),
        "sm__inst_executed.sum.peak_sustained": (400.0, "inst/cycle"),  # 100 SMs x 4
        "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio": (24.0, ""),
        "smsp__thread_inst_executed_per_inst_executed.ratio": (28.0, ""),
    })
    return m


def test_fma_balance() -> None:
    c = by_kind(analyse_kernel(make_kernel(instruction_metrics())), "fma_balance", "fp32")
    f = 1e6 / 1.5e6
    assert c.factor == pytest.approx((1 + f) / 2)  # 0.8333
    assert c.value == pytest.approx(1.5e13 * (1 + f) / 2)
    assert c.evidence["fma_share"] == pytest.approx(f)


def test_issue_share() -> None:
    c = by_kind(analyse_kernel(make_kernel(instruction_metrics())), "issue_share", "fp32")
    share = (1.5e6 / 32) / 250_000  # 0.1875 of warp instructions are FP32
    pipe = 5000 / 32  # FP32 pipe: 156.25 warp instructions per cycle
    assert c.factor == pytest.approx(share * 400 / pipe)  # 0.48
    assert c.evidence["fp_share"] == pytest.approx(share)


def test_issue_share_assumes_four_per_sm_when_the_peak_is_absent() -> None:
    m = instruction_metrics()
    del m["sm__inst_executed.sum.peak_sustained"]
    c = by_kind(analyse_kernel(make_kernel(m, sm_count=100)), "issue_share", "fp32")
    assert c.factor == pytest.approx((1.5e6 / 32) / 250_000 * 400 / (5000 / 32))
    assert "assumed" in c.detail


def test_lane_efficiency() -> None:
    c = by_kind(analyse_kernel(make_kernel(instruction_metrics())), "lane_efficiency", "fp32")
    assert c.factor == pytest.approx(24 / 32)
    assert c.evidence["active_threads_per_inst"] == 28.0


def memory_metrics() -> dict:
    m = base_metrics()
    m.update({
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": (32.0, "byte/sector"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": (12.5, "%"),  # 4 of 32 bytes
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": (3000.0, "sector"),
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": (750.0, "request"),
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": (1000.0, "sector"),
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": (31.25, "request"),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": (16_000.0, ""),
        "smsp__sass_inst_executed_op_shared_ld.sum": (1000.0, "inst"),
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": (1000.0, ""),
        "smsp__sass_inst_executed_op_shared_st.sum": (1000.0, "inst"),
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": (15_000.0, ""),
    })
    return m


def test_sector_use_weighted_by_sectors() -> None:
    model = analyse_kernel(make_kernel(memory_metrics()))
    c = by_kind(model, "sector_use", "dram")
    per_sector = (32 * 3000 + 4 * 1000) / 4000  # 25 bytes used per sector
    assert c.factor == pytest.approx(per_sector / 32)
    assert c.value == pytest.approx(2e12 * per_sector / 32)
    assert by_kind(model, "sector_use", "l2").factor == pytest.approx(per_sector / 32)
    assert "global stores use 4 of every 32 bytes fetched" in c.action


def test_coalescing() -> None:
    model = analyse_kernel(make_kernel(memory_metrics()))
    st = next(c for c in model.ceilings if c.kind == "coalescing" and "st_sectors" in c.evidence)
    # stores: 32 sectors per request; the 4 bytes used per sector fit in 32 * 4 / 32 = 4 sectors
    assert st.evidence["st_sectors_per_request"] == pytest.approx(32.0)
    assert st.factor == pytest.approx(4 / 32)
    ld = next(c for c in model.ceilings if c.kind == "coalescing" and "ld_sectors" in c.evidence)
    assert ld.factor == pytest.approx(1.0)


def test_coalescing_agrees_with_nsight_computes_count_of_excessive_sectors() -> None:
    """The stores' 28 excessive sectors per request (1000 sectors, 31.25 requests, 4 needed each: 875 excessive)
    agree with Nsight Compute's count (875 of 4000 theoretical sectors): the per-direction caps stay."""
    metrics = memory_metrics() | {"memory_l2_theoretical_sectors_global": (4000.0, "sector"),
                                  "memory_l2_theoretical_sectors_global_ideal": (3125.0, "sector")}
    model = analyse_kernel(make_kernel(metrics))
    caps = sorted(c.factor for c in model.ceilings if c.kind == "coalescing")
    assert caps == [pytest.approx(4 / 32), pytest.approx(1.0)]


def test_coalescing_from_nsight_compute_where_the_average_claims_more_waste() -> None:
    """A broadcast load beside coalesced ones lowers the loads' bytes per sector (16 of 32 here: 1500 of their 3000
    sectors would be excessive) while Nsight Compute counts 100 excessive sectors of 4000 in all: its count is the
    cap, (4000 - 100) / 4000, for loads and stores together, and the per-direction estimate is set aside."""
    metrics = memory_metrics() | {
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": (16.0, "byte/sector"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": (100.0, "%"),
        "derived__memory_l2_theoretical_sectors_global_excessive": (100.0, "byte"),  # sectors, whatever the label
    }
    model = analyse_kernel(make_kernel(metrics))
    cap = by_kind(model, "coalescing")
    assert cap.factor == pytest.approx(3900 / 4000)
    assert cap.evidence == {"global_sectors": 4000.0, "global_excessive_sectors": 100.0,
                            "global_needed_sectors": 3900.0}
    assert "Nsight Compute counts 100 excessive sectors (2% of them" in cap.detail
    (skipped,) = [n for n in model.not_applicable if n.kind == "coalescing"]
    assert "would claim 1,500 excessive sectors where Nsight Compute counts 100" in skipped.reason


def test_coalescing_from_nsight_compute_where_the_average_sees_less_waste() -> None:
    """Bytes per sector say every sector is used (32 of 32) while Nsight Compute counts 1,000 excessive sectors of
    4,000: its count is the cap, 3/4, and the per-direction one (no waste) is set aside without the broadcast
    explanation."""
    metrics = memory_metrics() | {
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": (100.0, "%"),
        "memory_l2_theoretical_sectors_global": (4000.0, "sector"),
        "memory_l2_theoretical_sectors_global_ideal": (3000.0, "sector"),
    }
    model = analyse_kernel(make_kernel(metrics))
    assert by_kind(model, "coalescing").factor == pytest.approx(3000 / 4000)
    (skipped,) = [n for n in model.not_applicable if n.kind == "coalescing"]
    assert "would claim 0 excessive sectors where Nsight Compute counts 1,000: its count" in skipped.reason


def test_coalescing_from_nsight_compute_alone() -> None:
    """No bytes-per-sector ratio (Nsight Compute's source counters alone): the cap is needed ÷ touched sectors,
    2/3 for 16,384 excessive of 49,152 (a halo exchange's strided accesses)."""
    metrics = base_metrics() | {"memory_l2_theoretical_sectors_global": (49152.0, "sectors"),
                                "memory_l2_theoretical_sectors_global_ideal": (32768.0, "sectors")}
    cap = by_kind(analyse_kernel(make_kernel(metrics)), "coalescing")
    assert cap.factor == pytest.approx(2 / 3)
    assert cap.key == ("coalescing", "l1", "global")
    assert cap.detail.startswith("global loads and stores touch 49,152 sectors where 32,768 would hold the bytes used")


def test_bank_conflicts_from_nsight_computes_own_count() -> None:
    """(wavefronts − conflicts) ÷ wavefronts, never wavefronts per instruction (wide accesses are not conflicts)."""
    metrics = memory_metrics()
    metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] = (0.0, "")
    c = by_kind(analyse_kernel(make_kernel(metrics)), "bank_conflicts", "l1")
    assert c.factor == pytest.approx((17_000 - 15_000) / 17_000)
    assert c.evidence["bank_conflicts"] == 15_000 and c.evidence["shared_wavefronts"] == 17_000
    # the per-op counts win over the pipe's totals, which count other accesses' wavefronts too (the loads'
    # count includes ldmatrix)
    metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] = (40_000.0, "")
    metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"] = (15_000.0, "")
    metrics["smsp__inst_executed_op_ldsm.sum"] = (5_000.0, "inst")
    c = by_kind(analyse_kernel(make_kernel(metrics)), "bank_conflicts", "l1")
    assert c.factor == pytest.approx(2_000 / 17_000) and c.evidence["ldmatrix_inst"] == 5_000
    # a report with the totals alone: they serve, and the text says the share of conflicts is a lower bound
    for op in ("ld", "st"):
        del metrics[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"]
    c = by_kind(analyse_kernel(make_kernel(metrics)), "bank_conflicts", "l1")
    assert c.factor == pytest.approx(25_000 / 40_000) and "at least this share" in c.detail
    # no shared load, store or atomic: no ceiling, whatever the pipe's total counts
    metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = (0.0, "")
    metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = (0.0, "")
    metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = (0.0, "")
    model = analyse_kernel(make_kernel(metrics))
    assert not [c for c in model.ceilings if c.kind == "bank_conflicts"]
    assert any(n.kind == "bank_conflicts" and "the pipe's total of 40,000 wavefronts" in n.reason
               for n in model.not_applicable)


def test_wide_shared_accesses_are_not_conflicts() -> None:
    metrics = memory_metrics()  # 16 wavefronts per shared load instruction: 128-bit loads, say
    metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = (0.0, "")
    metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] = (0.0, "")
    c = by_kind(analyse_kernel(make_kernel(metrics)), "bank_conflicts", "l1")
    assert c.factor == 1.0


def test_async_copies_get_no_ldg_sector_ceiling() -> None:
    """A cp.async kernel: the LDG bytes-per-sector metric reads 0, which means no LDG, not 0 bytes used."""
    metrics = memory_metrics()
    metrics["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"] = (0.0, "byte/sector")
    metrics["smsp__sass_inst_executed_op_global_ld.sum"] = (0.0, "inst")
    metrics["smsp__sass_inst_executed_op_global_st.sum"] = (100.0, "inst")
    metrics["smsp__inst_executed_op_ldgsts.sum"] = (4608.0, "inst")
    metrics["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"] = (55296.0, "sector")
    metrics["sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"] = (3456.0, "request")
    model = analyse_kernel(make_kernel(metrics))
    sector = by_kind(model, "sector_use", "l2")
    assert sector.evidence == {"st_bytes_used_per_sector": 4.0, "st_sectors": 1000.0}  # stores only
    # under DRAM the same 4-of-32 ceiling would sit below the 30 % the kernel reaches: dropped, and said
    assert not [c for c in model.ceilings if c.roof == "dram" and c.kind == "sector_use"]
    assert any(n.kind == "sector_use" and n.reason.startswith("dropped") for n in model.not_applicable)
    assert not [c for c in model.ceilings if c.kind == "coalescing" and "ld_sectors" in c.evidence]
    reasons = " ".join(n.reason for n in model.not_applicable)
    assert "no ordinary global loads (LDG)" in reasons and "16.0 sectors per request" in reasons


def test_tensor_ceilings() -> None:
    m = base_metrics()
    m["sm__cycles_elapsed.avg"] = (1500.0, "cycle")
    pre = "sm__ops_path_tensor_"
    m[pre + "src_tf32_dst_fp32_sparsity_off.sum"] = (3e8, "")
    m[pre + "src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"] = (250_000.0, "")
    m[pre + "src_bf16_dst_fp32_sparsity_off.sum"] = (0.0, "")
    m[pre + "src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"] = (500_000.0, "")
    model = analyse_kernel(make_kernel(m))
    # a faster precision is an option, not a ceiling: no tensor_datapath ceiling
    assert not [c for c in model.ceilings if c.kind == "tensor_datapath"]
    (option,) = model.precision_options
    assert option["datapath"] == "src_bf16_dst_fp32_sparsity_off" and option["speedup_bound"] == pytest.approx(2.0)
    assert option["in_use"] == "src_tf32_dst_fp32_sparsity_off"
    share = by_kind(model, "tensor_share")
    assert share.factor == pytest.approx(3e8 / (3e8 + 2.5e6 + 6e4))
    # The FP32 instructions beside the tensor work are not the kernel's: no ceiling on the FP32 roof, each said
    assert model.dominant_precision == "tensor" and model.q.flop["fp32"].value == pytest.approx(2.5e6)
    assert not [c for c in model.ceilings if c.roof in ("fp32", "fp64", "fp16")]
    side = [(n.kind, n.roof, n.reason) for n in model.not_applicable if n.roof == "fp32"]
    reason = ("the kernel's work runs on the tensor cores (2,500,000 FP32 FLOP beside them): the FP32 roof is not "
              "its roof")
    assert side == [(kind, "fp32", reason) for kind in ("fma_balance", "issue_share", "lane_efficiency")]


def test_cuda_core_ceilings_stay_where_the_tensor_cores_are_not_the_kernels_work() -> None:
    """The same FP32 kernel with an idle tensor path keeps its FP32 ceilings (FP32 is its dominant precision)."""
    m = instruction_metrics()
    m["sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum"] = (0.0, "")
    m["sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"] = (500_000.0, "")
    model = analyse_kernel(make_kernel(m))
    assert model.dominant_precision == "fp32"
    assert {c.kind for c in model.ceilings if c.roof == "fp32"} == {"fma_balance", "issue_share", "lane_efficiency"}


@needs_corpus
def test_an_int8_tensor_gemm_gets_no_ceiling_on_the_fp32_roof() -> None:
    """CUTLASS's int8 GEMM on an A100: IMMA kept the tensor pipe busy with work no counter turns into FLOP; its
    147,456 FP32 FLOP are the epilogue's. FMA balance 50 % or issue share 6 % on the FP32 roof would describe
    them, not the kernel."""
    a = ncu_roofline.analyze(CORPUS / "cutlass__report-s8.ncu-rep")
    (k,) = [k for k in a.reports[0].kernels if k.raw.name == "Kernel"]
    assert "flop_incomplete" in k.flags and k.q.flop["fp32"].value == 147_456.0
    assert not [c for c in k.ceilings if c.roof == "fp32"]
    reasons = {n.kind: n.reason for n in k.not_applicable if n.roof == "fp32"}
    assert set(reasons) == {"fma_balance", "issue_share", "lane_efficiency"}
    assert reasons["fma_balance"].startswith("the tensor pipe did work that no counter here turns into FLOP (busy "
                                             "2.9% of the run): 147,456 FP32 FLOP are a side part of the kernel")


@needs_corpus
def test_no_cuda_core_ceiling_on_a_kernel_whose_work_is_on_the_tensor_cores() -> None:
    """Corpus invariant: a kernel whose measured tensor FLOP are the most, or whose tensor pipe did uncounted work,
    has no FMA-balance, issue-share or lane-efficiency ceiling; every other kernel with FP32 instruction counts
    and work keeps its FMA balance where the report holds the mix."""
    a = ncu_roofline.analyze(corpus_files())
    tensor_kernels = 0
    for _, k in a.models:
        on_tensor = k.dominant_precision == "tensor" or "flop_incomplete" in k.flags
        cuda_core = [c for c in k.ceilings if c.kind in ("fma_balance", "issue_share", "lane_efficiency")]
        if on_tensor:
            tensor_kernels += 1
            assert not cuda_core, (k.raw.name, cuda_core)
        else:
            assert not [n for n in k.not_applicable if "is not its roof" in n.reason], k.raw.name
    assert tensor_kernels >= 1


def test_every_factor_in_range_and_diagnosis_ranked() -> None:
    model = analyse_kernel(make_kernel(instruction_metrics() | memory_metrics()))
    assert model.ceilings
    assert all(0 < c.factor <= 1 for c in model.ceilings)
    factors = [f.factor for f in model.diagnosis if f.factor is not None and f.roof == model.bound_by]
    assert factors == sorted(factors)
    d = model.to_dict()
    assert {"kind", "roof", "factor", "value", "evidence"} <= set(d["ceilings"][0])
    assert d["diagnosis"] and all(f["headline"] and f["detail"] for f in d["diagnosis"])
    # every finding here has something to do, and its next step is worded
    assert all(f["lever"] and f["next_step"] for f in d["diagnosis"])


@needs_corpus
def test_every_ceiling_on_the_corpus_is_in_range() -> None:
    a = ncu_roofline.analyze(corpus_files())
    kinds = set()
    for _, k in a.models:
        for c in k.ceilings:
            assert 0 < c.factor <= 1 and math.isfinite(c.factor), (k.raw.name, c)
            kinds.add(c.kind)
    assert {"fma_balance", "issue_share", "lane_efficiency", "sector_use", "coalescing", "bank_conflicts"} <= kinds


@needs_corpus
def test_smem_transpose_bank_conflicts() -> None:
    kernels = {k.raw.name: k for k in
               ncu_roofline.analyze(CORPUS / "cudaprogramming__smemTranspose.ncu-rep").reports[0].kernels}
    plain = by_kind(kernels["transposeSmem"], "bank_conflicts")
    raw = kernels["transposeSmem"].raw
    wavefronts = sum(raw.number(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum") for op in ("ld", "st"))
    conflicts = sum(raw.number(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum") for op in ("ld", "st"))
    assert plain.factor == pytest.approx((wavefronts - conflicts) / wavefronts)  # Nsight Compute's own count
    assert plain.factor < 0.15  # 88 % of its shared wavefronts are conflicts (16-way transposed reads)
    for plain_copy in ("naiveGmem", "copyGmem"):  # no shared memory: the pipe's 1,048,576 wavefronts are not theirs
        assert not [c for c in kernels[plain_copy].ceilings if c.kind == "bank_conflicts"]
    # the kernel is at the DRAM roof (86 %): the conflicts under L1 do not explain a DRAM gap
    transposed = kernels["transposeSmem"]
    assert transposed.bound_by == "dram" and transposed.diagnosis[0].kind == "at_limit"
    assert not any(f.kind == "bank_conflicts" for f in transposed.diagnosis)
    for padded in ("transposeSmemPad", "transposeSmemUnrollPad"):
        c = by_kind(kernels[padded], "bank_conflicts")
        assert c.evidence["conflict_free_share"] > 0.9 and c.factor > 0.9
        assert not any(f.kind == "bank_conflicts" for f in kernels[padded].diagnosis)
    # the naive transpose writes with a stride: 4 of every 32 bytes used by its stores
    # Nsight Compute finds the crossbar into L2 at 91 %: that unit is the limiter, and the sector use under the
    # L2 roof explains it. Its L2 bytes count every sector (tag traffic: the chart's reads alone are fewer than
    # DRAM's bytes), the unused parts included: 25 % of the roof moved, of which the accesses use 134,217,728 of
    # 604,115,040 bytes (5.6 % of the roof), under the 22 % cap on used bytes: no contradiction
    naive = kernels["naiveGmem"]
    assert naive.bound_by == "lts__xbar2lts_cycles_active" and naive.regime == "at_limit"
    assert naive.q.bytes["l2"].definition == "tags"
    assert [f.kind for f in naive.diagnosis[:2]] == ["unit_throughput", "sector_use"]
    found = naive.diagnosis[1]
    # global stores use 4 of every 32 bytes: make adjacent threads access adjacent addresses
    assert (found.figures["worst_op"], found.figures["worst_bytes"], found.lever) == ("stores", 4.0, "adjacent")
    # its bound is the bytes L2 moved over those used, not the L2 roof (the crossbar bounds the kernel), and the
    # finding sets the used bytes' share of the roof (5.6 %) beside the point's (25 %, every byte moved)
    assert found.basis == ("sector_bytes",) and found.speedup == pytest.approx(1 / found.factor)
    assert round(found.factor, 2) == 0.22 and found.figures["moved"] == 603_979_776
    assert round(found.figures["used"], 3) == 0.056 and round(naive.utilization["l2"], 2) == 0.25
    cap = by_kind(naive, "sector_use", "l2")
    assert cap.evidence["l2_useful_bytes"] == 32 * 2_097_152 + 4 * 16_777_216
    assert cap.factor == pytest.approx(134_217_728 / 603_979_776) and cap.factor < naive.utilization["l2"]
    assert not any(n.kind == "sector_use" and n.roof == "l2" for n in naive.not_applicable)


@needs_corpus
def test_mw_div_to_mult_instruction_mix() -> None:
    def kernel(name: str):
        a = ncu_roofline.analyze(CORPUS / f"gpu-workshop__{name}.ncu-rep")
        return next(k for k in a.reports[0].kernels if k.raw.name == "compute_tendencies_x_279_gpu")

    base, head = kernel("MW_Baseline"), kernel("MW_DivToMult")
    b, h = by_kind(base, "issue_share", "fp64"), by_kind(head, "issue_share", "fp64")
    assert h.evidence["warp_inst_executed"] < 0.5 * b.evidence["warp_inst_executed"]
    fb, fh = by_kind(base, "fma_balance", "fp64"), by_kind(head, "fma_balance", "fp64")
    assert fb.evidence["fp64_dfma_thread_inst"] > 2 * fh.evidence["fp64_dfma_thread_inst"]
    assert fb.evidence["fma_share"] != pytest.approx(fh.evidence["fma_share"], abs=1e-3)


@needs_corpus
def test_naive_and_coalesced_gemm_report_the_same_sector_use() -> None:
    """Both GEMMs' loads use 26.4 of every 32 bytes fetched, but a GEMM reuses its operands through the
    caches: DRAM and L2 move far fewer bytes than the loads use, so the unused sector bytes cap neither
    (said under ceilings not applicable, with the figures). Nsight Compute counts no excessive global sectors in
    either (a broadcast load beside coalesced ones: 2.5 sectors per request is what they need), so neither has
    an L1 coalescing ceiling, and both say why."""
    def sector_use(name: str) -> tuple[list[str], list[str]]:
        k = ncu_roofline.analyze(CORPUS / f"cudacode__{name}.ncu-rep").reports[0].kernels[0]
        assert not [c for c in k.ceilings if c.kind in ("sector_use", "coalescing")]
        assert k.raw.number("derived__memory_l2_theoretical_sectors_global_excessive") == 0
        reasons = [n.reason for n in k.not_applicable if n.kind == "sector_use"]
        return reasons, [n.reason for n in k.not_applicable if n.kind == "coalescing"]

    (why, naive), (_, coalesced) = sector_use("naive"), sector_use("global_mem_coalesce")
    assert naive == coalesced and "counts no excessive global sectors" in naive[0]  # the counters are the same
    assert len(why) == 2 and all("no more than the" in r and "cap nothing" in r for r in why)
    k = ncu_roofline.analyze(CORPUS / "cudacode__naive.ncu-rep").reports[0].kernels[0]
    useful = 167903232 * 26.404371584699454  # load sectors x bytes used per sector
    assert k.raw.number("dram__bytes_read.sum") < useful / 10


@needs_corpus
def test_instruction_roofline_on_smem_transpose() -> None:
    kernels = {k.raw.name: k for k in
               ncu_roofline.analyze(CORPUS / "cudaprogramming__smemTranspose.ncu-rep").reports[0].kernels}
    copy = kernels["copyGmem"].instruction_roofline
    assert copy["global"]["inst_per_transaction"] == pytest.approx(0.25)  # unit stride, 4-byte: on the wall
    naive = kernels["naiveGmem"].instruction_roofline
    assert naive["global"]["inst_per_transaction"] < 0.1  # strided stores: towards one sector per thread
    plain, padded = kernels["transposeSmem"].instruction_roofline, kernels["transposeSmemPad"].instruction_roofline
    assert plain["shared"]["inst_per_transaction"] < 0.15 < 0.9 < padded["shared"]["inst_per_transaction"]
    assert copy["issue_peak_warp_inst_per_s"] == pytest.approx(
        4 * 128 * kernels["copyGmem"].raw.number("gpc__cycles_elapsed.avg.per_second"))


def test_missing_ceiling_metrics_are_named_with_how_to_collect_them() -> None:
    model = analyse_kernel(make_kernel(base_metrics()))  # FP work, no instruction or memory metrics
    missing = {m.quantity: m for m in model.missing}
    for kind in ("issue_share", "lane_efficiency", "sector_use", "coalescing", "bank_conflicts"):
        assert f"ceilings.{kind}" in missing
    assert "smsp__inst_executed.sum" in missing["ceilings.issue_share"].reason
    assert missing["ceilings.sector_use"].collect_with.startswith(
        "--metrics smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio")
    full = analyse_kernel(make_kernel(instruction_metrics() | memory_metrics()))
    assert not [m for m in full.missing if m.quantity.startswith("ceilings.")]


@needs_corpus
def test_coalescing_from_nsight_computes_count_where_no_ratio_is_held() -> None:
    """nodeByPoint5 (profileHiggs): sectors and requests of its global loads are there, the bytes used per
    sector are not; Nsight Compute's source counters count 40,401,400,442 excessive of 182,030,410,650 sectors
    in its longest launch (its UncoalescedGlobalAccess rule: "22% of the total"): the cap is the needed share,
    78 %, and no
    coalescing ceiling is said missing. The sector-use ceiling, which needs the ratio, is."""
    a = ncu_roofline.analyze(CORPUS / "self-join-mistic__profileHiggs.out.ncu-rep")
    k = max(a.reports[0].kernels, key=lambda k: k.q.duration_s.value)
    assert k.raw.name == "nodeByPoint5" and not any(c.kind == "sector_use" for c in k.ceilings)
    cap = by_kind(k, "coalescing")
    assert cap.factor == pytest.approx(141_629_010_208 / 182_030_410_650)
    assert "(22% of them" in cap.detail
    assert any("40401400442 excessive sectors (22% of the total 182030410650 sectors)" in r.message for r in k.raw.rules
               if r.rule == "UncoalescedGlobalAccess")
    missing = {m.quantity: m for m in k.missing}
    assert "ceilings.coalescing" not in missing
    assert "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio" in missing["ceilings.sector_use"].reason


@needs_corpus
def test_bank_conflicts_state_nsight_computes_source_level_count_beside_its_counter() -> None:
    """transposeSmem: the factor stays the conflict counters' (loads and stores: (8,995,831 − 7,913,647) /
    8,995,831, 8.3 wavefronts per conflict-free one), and the text adds the source-level figures (7,864,320
    excess over an ideal 1,048,576: 8.5x, which agree); none where they
    disagree with the counter (the CUTLASS kernel: excess 13,824, conflicts 0) or see no excess."""
    a = ncu_roofline.analyze(CORPUS / "cudaprogramming__smemTranspose.ncu-rep")
    ceiling = {k.raw.name: c for k in a.reports[0].kernels for c in k.ceilings if c.kind == "bank_conflicts"}
    assert set(ceiling) == {"transposeSmem", "transposeSmemPad", "transposeSmemUnrollPad"}  # not the global copies
    c = ceiling["transposeSmem"]
    assert c.factor == pytest.approx((8_995_831 - 7_913_647) / 8_995_831)
    assert "8.31 wavefronts per conflict-free one" in c.detail and c.action.startswith("remove shared-memory bank")
    # the padded transposes keep 2.3 % and 5.8 % of their wavefronts as conflicts: no advice to pad them again
    for name in ("transposeSmemPad", "transposeSmemUnrollPad"):
        pad = ceiling[name]
        conflicts = pad.evidence["bank_conflicts"] / pad.evidence["shared_wavefronts"]
        assert 0 < conflicts < 0.1 and "pad the tile" not in pad.action, name
        assert pad.action == (f"little to gain from the shared-memory layout: only {conflicts:.1%} of its wavefronts "
                              "are bank conflicts (a padded or swizzled tile can keep a few)")
        assert f"{1 / (1 - conflicts):.3g} wavefronts per conflict-free one" in pad.detail
    assert c.detail.endswith("its source-level count: 7,864,320 wavefronts over an ideal 1,048,576 (8.5× the ideal))")
    assert "source-level" not in ceiling["transposeSmemPad"].detail
    b = ncu_roofline.analyze(CORPUS / "cutlass__report-s8.ncu-rep")
    for k in b.reports[0].kernels:
        assert all("source-level" not in c.detail for c in k.ceilings if c.kind == "bank_conflicts")
