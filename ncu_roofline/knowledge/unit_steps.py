"""The next step for a kernel bound by each unit of `throughputs`, one imperative sentence per unit id. Extra
keys (`issue_vector`, `issue_no_loads`, `lsu_no_shared`, `lsu_pipe_no_shared`, `lsu_unsplit`, `lsu_no_conflicts`,
`fp64_own`, `fp64_division`, `fp64_library`) hold a more specific step that a fact about the kernel selects.
"""

from __future__ import annotations

_DRAM = "Move fewer bytes through DRAM: fuse with neighbouring kernels, reuse tiles on chip, or store narrower types."
_TENSOR = "Run MMAs in TF32, BF16, FP16 or FP8 where accuracy allows, try 2:4 sparsity, and skip padded products."
_MIO = "Issue fewer, wider shared-memory accesses, 8 or 16 bytes each, and cut special-register reads and barriers."
_FEWER_L2 = "Cut L1 misses: reuse data within a block, tile through shared memory, and use whole 32-byte sectors."
_ISSUE = ("Issue fewer instructions: use vector loads, cut address and integer arithmetic, "
          "and do more work per instruction.")

UNIT_STEPS: dict[str, str] = {
    # Headlines
    "sm_throughput": "Cut instructions per result, starting with those of the busiest SM pipe or issue slot.",
    "memory_throughput": ("Move fewer bytes with fewer, coalesced requests, starting at the busiest of L1/TEX, "
                          "L2 and DRAM."),
    "dram_throughput": _DRAM,
    "l2_throughput": "Keep reused data in L1 and shared memory: tile the loops so each block fetches each value once.",
    "l1tex_throughput": ("Cut wavefronts per request: coalesce global accesses, make shared-memory accesses "
                         "conflict-free, and issue fewer memory instructions."),
    # SM sub-units
    "sm__issue_active": _ISSUE,
    "sm__inst_executed": ("Execute fewer instructions per result: hoist invariant work out of loops, unroll, "
                          "and use vector instructions."),
    "sm__pipe_alu_cycles_active": ("Cut integer, logic and comparison instructions per result: simplify index "
                                   "arithmetic, hashing and RNG, and hoist invariants."),
    "sm__pipe_fma_cycles_active": ("Cut FMA instructions per result: hoist invariant arithmetic, strength-reduce "
                                   "index multiplies to adds, or use half2 or tensor cores."),
    "sm__pipe_fmaheavy_cycles_active": ("Cut FP32 and integer multiply-adds per result: hoist invariant arithmetic "
                                        "out of loops and strength-reduce index multiplies."),
    "sm__pipe_fp64_cycles_active": ("Move double-precision work to FP32 or mixed precision where accuracy allows, "
                                    "and remove unintended double promotion."),
    "sm__pipe_tensor_cycles_active": _TENSOR,
    "sm__pipe_tensor_op_dmma_cycles_active": ("Cut FP64 matrix work, or compute the products in FP32 or TF32 with "
                                              "FP64 refinement where accuracy allows."),
    "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active": _TENSOR,
    "sm__pipe_tc_cycles_active": _TENSOR,
    "sm__pipe_shared_cycles_active": ("Compare the FP64, FP16 and tensor pipes' own shares, then cut or move the "
                                      "work of the busiest."),
    "sm__inst_executed_pipe_fp16": ("Use packed half2 instructions such as HFMA2, and move matrix-shaped "
                                    "half-precision work onto the tensor cores."),
    "sm__inst_executed_pipe_lsu": ("Issue fewer load/store instructions: use vector loads, cut shared-memory round "
                                   "trips, and reuse values in registers."),
    "sm__inst_executed_pipe_xu": ("Use fast-math intrinsics such as __expf and __sinf, and cut type conversions "
                                  "in the inner loops."),
    "sm__inst_executed_pipe_adu": ("Cut branches and divergent address computations: predicate short branches and "
                                   "make conditions warp-uniform."),
    "sm__inst_executed_pipe_cbu_pred_on_any": ("Cut branches, divergent branches and barriers: unroll loops, "
                                               "predicate short branches, and make conditions warp-uniform."),
    "sm__inst_executed_pipe_uniform": ("Cut warp-uniform instructions: fold or hoist loop and address arithmetic "
                                       "that is the same across the warp."),
    "sm__inst_executed_pipe_tex": ("Issue fewer texture fetches: reuse texels from registers, and use plain global "
                                   "loads where no filtering is needed."),
    "sm__inst_executed_pipe_ipa": ("Interpolate fewer attributes: drop unused ones and compute derivable values in "
                                   "the shader instead."),
    "sm__mio_inst_issued": _MIO,
    "sm__mio2rf_writeback_active": ("Load shared memory in fewer, wider 8- or 16-byte accesses, and reuse loaded "
                                    "values from registers."),
    "sm__mio_pq_read_cycles_active": _MIO,
    "sm__mio_pq_write_cycles_active": _MIO,
    "sm__pipe_tma_cycles_active": ("Issue fewer, larger TMA copies with bigger boxes, and multicast shared tiles to "
                                   "the blocks of a cluster."),
    "sm__mem_tensor_cycles_active": ("Keep accumulators in tensor memory across MMAs and read them out once, "
                                     "cutting tensor-memory loads and stores."),
    "idc__request_cycles_active": ("Make constant-memory indices warp-uniform, or move divergently indexed tables "
                                   "to read-only global or shared memory."),
    # Memory sub-units
    "l1tex__lsuin_requests": ("Issue fewer, wider load/store requests: use vector loads and coalesce neighbouring "
                              "threads' accesses."),
    "l1tex__data_pipe_lsu_wavefronts": ("Coalesce global accesses, and pad or swizzle shared-memory tiles to remove "
                                        "bank conflicts."),
    "l1tex__data_pipe_tex_wavefronts": ("Make neighbouring threads fetch neighbouring texels, and issue fewer "
                                        "texture fetches."),
    "l1tex__data_bank_reads": ("Read each shared value once into registers and reuse it there, with register "
                               "tiling and conflict-free layouts."),
    "l1tex__data_bank_writes": ("Store each shared-memory tile once, with a conflict-free layout, and cut other "
                                "shared-memory stores."),
    "l1tex__lsu_writeback_active": ("Load fewer bytes per result: drop repeated loads of one value and reuse values "
                                    "held in registers."),
    "l1tex__tex_writeback_active": "Issue fewer texture fetches per result, reusing fetched texels from registers.",
    "l1tex__f_wavefronts": "Use point sampling where filtering is not needed, and fetch fewer texels per result.",
    "l1tex__texin_sm2tex_req_cycles_active": ("Issue fewer texture and surface requests: reuse fetched values, and "
                                              "use plain global loads where possible."),
    "l1tex__m_l1tex2xbar_req_cycles_active": _FEWER_L2,
    "l1tex__m_xbar2l1tex_read_sectors": _FEWER_L2,
    "l1tex__m_xbar2l1tex_read_sectors_mem_dshared": ("Copy each tile into shared memory once per block, and "
                                                     "multicast it with TMA to a cluster's blocks."),
    "l1tex__tmain_requests": "Issue fewer, larger TMA copies, with bigger boxes covering more of each tile.",
    "lts__t_sectors": "Serve more accesses from L1 and shared memory: tile the loops so fewer sectors reach L2.",
    "lts__t_tag_requests": ("Send fewer requests to L2: coalesce into whole sectors, hit more in L1, and aggregate "
                            "atomics first."),
    "lts__d_sectors": "Move fewer bytes through L2 by reusing data in L1 and shared-memory tiles.",
    "lts__d_sectors_fill_device": ("Move fewer bytes from DRAM: fuse with neighbouring kernels, reuse tiles on "
                                   "chip, or store narrower types."),
    "lts__d_sectors_fill_sysmem": ("Copy or prefetch the data into device memory before launch instead of reading "
                                   "host-mapped or pageable memory in the kernel."),
    "lts__d_atomic_input_cycles_active": ("Aggregate atomics in registers or shared memory first, with warp "
                                          "reductions, then issue one atomic per block."),
    "lts__lts2xbar_cycles_active": _FEWER_L2,
    "lts__xbar2lts_cycles_active": ("Send fewer requests and stores to L2: coalesce into whole sectors and store "
                                    "each block's results once."),
    "dram__cycles_active": _DRAM,
    "fbpa__dram_sectors": _DRAM,
    "dram__bytes_read": ("Read fewer bytes from DRAM: fuse with the producing kernel, reuse tiles on chip, or load "
                         "narrower types."),
    "dram__bytes_write": ("Write fewer bytes to DRAM: fuse with the consuming kernel, or store results in "
                          "narrower types."),
    # Special levers, picked by a fact about the kernel
    "issue_vector": _ISSUE,
    "issue_no_loads": ("Issue fewer instructions: cut address and integer arithmetic, hoist invariants out of loops, "
                       "and do more work per instruction."),
    "lsu_no_shared": ("Coalesce global accesses: have neighbouring threads touch neighbouring addresses, and replace "
                      "wide scattered loads with contiguous ones."),
    "lsu_pipe_no_shared": "Issue fewer load/store instructions: use vector loads, and reuse values in registers.",
    "lsu_unsplit": ("Coalesce global accesses or remove shared-memory bank conflicts; --section "
                    "MemoryWorkloadAnalysis_Tables tells which applies."),
    "lsu_no_conflicts": ("Coalesce global accesses: make neighbouring threads read neighbouring addresses, and avoid "
                         "wide scattered loads and stores."),
    "fp64_own": ("Check for silent double promotion, such as 1.0 for 1.0f or double math functions, then use FP32 or "
                 "mixed precision."),
    "fp64_division": ("Compute a repeated divisor's reciprocal once and multiply, or do divisions and square roots in "
                      "FP32 where accuracy allows."),
    "fp64_library": ("Call the library's lower- or mixed-precision routine where accuracy allows, such as an FP32 or "
                     "TF32 variant."),
}
