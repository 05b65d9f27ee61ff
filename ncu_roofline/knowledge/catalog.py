"""The one wording catalog: every finding's headline, next step and detail, and how each bound was found.

Entries are keyed by (kind, variant): what was observed. Next steps are keyed by (kind, lever): what to do.
Bounds are keyed by basis. Templates are filled from a finding's figures (`knowledge.wording`). Limits, checked
by the tests over every capture: a headline holds a figure in at most 12 words; a next step is one imperative
sentence of at most 20 words; a detail is at most 60 words with no nested parentheses.
"""

from __future__ import annotations

from collections.abc import Mapping

from .stalls import COLLECT as STALL_COLLECT
from .unit_steps import UNIT_STEPS
from .wording import Entry, Figure, Kind, Template, Words, fill, first_upper

K = Kind
HIGH_USE = "80 %"  # Nsight Compute's Speed-Of-Light rule reads a unit as highly used from here

_CO = (" {co_label:up} at {co_share:pct} is within a tenth of the busiest limit, {top_label} at {top_share:pct}.",)
_LISTED = (" The busiest limit is {top_label}, so fixing this shortens waits, not the limit.",)
_GROUP = (" Only launches with this cap gain: {part_share:pct} of the group's time.",)
_MIXED = (" {mixed_headline}Summed over {mixed_launches:n} launches, this headline tops each unit's own; no launch"
          " has it as its own limit.", " {mixed_summed}Summed over {mixed_launches:n} launches it tops every other"
          " limit, though no launch is bound by it.")
# Where SMs idled part of the run, the issue slots' share per active cycle (`passes.diagnosis._issue_active`).
_ISSUE_ACTIVE = (" Per active cycle, as Nsight Compute's Issue Slots Busy counts, it is {issue_active:pct}.",)
# An L1 wavefront limit whose capture cannot tell uncoalesced global accesses from shared-memory bank conflicts.
_UNSPLIT = (" Neither bank conflicts nor sectors per request are measured: --section MemoryWorkloadAnalysis_Tables "
            "counts both.{unsplit}")
_FP64 = (" This GPU's FP32 roof is {fp32_ratio:.0f}× its FP64 roof.",
         " FP64 tensor cores, DMMA in cuBLAS or CUTLASS, run matrix products at up to {dmma_ratio:.1f}× the FP64 pipe.")
_ALLOWED = (" Its ceilings allow {reachable:pct} of the roof.",)
_NO_ROOF = (" The report gives no {level} roof for them to cap.{no_roof}",)  # passes.causes: no cap stated
# Local memory's share per level (passes.spills): counted at L1, counted or at least at L2, at least at DRAM.
_LOCAL_LEVELS = (" Local accesses make {l1_share:pct} of L1's global and local sectors.", (" They make at least "
                 "{l2_share:pct} of L2's sectors.{l2_at_least}",
                 " They make about {l2_share:pct} of the sectors L1 asked L2 for."),
                 " At least {dram_share:pct} of DRAM's bytes are theirs.")
_OCCUPANCY = ((" Achieved occupancy is {achieved:pct} of a theoretical {theoretical:pct}.",
               " Achieved occupancy is {achieved:pct}."),)
# Why warps stall (passes.stalls): the leading reasons' shares of the stall cycles, or how to collect them.
_STALLS = ((" Stall cycles: {stall1} {stall1_share:pct}, {stall2} {stall2_share:pct}.",
            " Stall cycles: {stall1} {stall1_share:pct}.",
            " Stall reasons are not measured: " + STALL_COLLECT + " collects them.{stalls_unmeasured}"),)
# Idle SMs, a cause measured without them: the leading stall of the active cycles only, where measured.
_TOP_STALL = (" Stall cycles: {stall1} {stall1_share:pct}.",)
# Launch geometry (`model.geometry`): what binds the blocks per SM, with the figure that binds; the grid's waves.
_LIMITED = (" {occ_by:up}: {occ_blocks:n} block(s) per SM",
            (" at {occ_regs:n} registers a thread.", " at {occ_smem:n} bytes a block.",
             " at {occ_threads:n} threads a block.", ".{occ_end}"))
_WAVES = (("{grid:n} blocks on {slots:n} block slots make {waves:.2f} waves",
           "The grid's {grid:n} blocks make {waves:.2f} waves of about {per_wave:n} blocks"),
          ("; {grid_down:n} or {grid_up:n} blocks fill whole waves.", "; {grid_up:n} blocks fill whole waves.", "."))
_TAIL_HEADLINE = (("{waves:.2f} waves: last {last:pct} full, {idle_slots:pct} of block-slot time idle",
                   "{waves:.2f} waves: last {last_small:pct1} full, {idle_slots:pct} of block-slot time idle",
                   "Partial last wave: {waves:.2f} waves, the last {last:pct} full",
                   "Partial last wave: {waves:.2f} waves, the last {last_small:pct1} full"),)

CATALOG: dict[tuple[Kind, str], Entry] = {
    # Too little work: the launch leaves the GPU idle.
    (K.TOO_LITTLE_WORK, "few_blocks"): Entry(
        # Where SMs hold more than one block, the bound fills every block slot, not only the idle SMs.
        (("{grid:n} blocks for {more_slots:n} block slots: {idle_sms:n} of {sms:n} SMs idle",
          "Only {grid:n} of {sms:n} SMs get a block: {idle_sms:n} idle"),),
        ("The grid has {grid:n} block(s) for {sms:n} SMs, {waves:.2g} of a wave: the idle SMs add nothing.",
         " They hold {slots:n} block slots.", *_LIMITED,
         " At {duration_us:.3g} µs, launch overhead is of the order of the run.{tiny}"),
        "LaunchStats, Occupancy"),
    (K.TOO_LITTLE_WORK, "under_wave"): Entry(
        (("{grid:n} blocks for {slots:n} block slots: {waves:.2g} of a wave",
          "{waves:.2g} of a wave: too few warps to hide latency"),),
        (("The grid's {grid:n} blocks fill {waves:.2g} of the {slots:n} block slots: {idle_slots:pct} stay empty the "
          "whole run.", "The grid's {grid:n} blocks fill {waves:.2g} of what all SMs hold at once, so every SM could "
          "hold more blocks.", "The grid fills {waves:.2g} of what all SMs hold at once, so every SM could hold "
          "more blocks."), *_LIMITED, " At {duration_us:.3g} µs, launch overhead is of the order of the run.{tiny}"),
        "LaunchStats, Occupancy"),
    (K.TOO_LITTLE_WORK, "idle_limits"): Entry(
        (("Nothing is busy: a {grid:n}-block grid for {sms:n} SMs{few}",
          "Nothing is busy: {grid:n} blocks, {waves:.2g} of a wave{under}",
          "Nothing is busy: every limit under {threshold:pct} of peak"),),
        ("Every limit is under {threshold:pct} of its peak, the busiest at {busiest:pct1}: too little work to load "
         "the GPU.", (" The grid has {grid:n} block(s) for {sms:n} SMs: {idle_sms:n} have none.{few}",
                      " Its {grid:n} blocks fill {waves:.2g} of the {slots:n} block slots.{under}"),
         *_LIMITED, " At {duration_us:.3g} µs, launch overhead is of the order of the run.{tiny}"),
        "SpeedOfLight, LaunchStats"),
    # At a roof.
    (K.AT_LIMIT, "high"): Entry(
        ("{limit} at {share:pct} of peak: ≤{left:x} left",),
        ("The kernel uses {share:pct} of the {limit} roof, past the " + HIGH_USE + " Nsight Compute calls high use. "
         "Only less work at this roof makes it faster.",),
        "SpeedOfLight"),
    (K.AT_LIMIT, "short"): Entry(
        ("{limit} at {share:pct} of peak: ≤{left:x} left",),
        ("The kernel uses {share:pct} of the {limit} roof, under the " + HIGH_USE + " Nsight Compute calls high "
         "use. Less work at this roof makes it faster; more work in flight per SM reaches the rest.",),
        "SpeedOfLight"),
    (K.UNIT_THROUGHPUT, "high"): Entry(
        ("{unit:up} at {share:pct}: ≤{left:x} left",),
        ("{unit:up} is at {share:pct} of its peak; only less work for it makes the kernel faster.",
         *_ISSUE_ACTIVE,
         " The {roof_label} roof is only at {roof_share:pct}.",
         " The report holds one direction of DRAM traffic, so DRAM may be busier.{one_direction}", _UNSPLIT, *_FP64,
         *_MIXED),
        "SpeedOfLight, ComputeWorkloadAnalysis, MemoryWorkloadAnalysis"),
    (K.UNIT_THROUGHPUT, "short"): Entry(
        ("{unit:up} at {share:pct}: ≤{left:x} left",),
        ("{unit:up} is at {share:pct} of its peak, under the " + HIGH_USE + " Nsight Compute calls high use: less "
         "work for it, or more work in flight, makes the kernel faster.",
         *_ISSUE_ACTIVE,
         " {occ_by:up} set the theoretical occupancy of {theoretical:pct}, {occ_blocks:n} blocks per SM.",
         " The {roof_label} roof is only at {roof_share:pct}.",
         " The report holds one direction of DRAM traffic, so DRAM may be busier.{one_direction}", _UNSPLIT, *_FP64,
         *_MIXED),
        "SpeedOfLight, ComputeWorkloadAnalysis, MemoryWorkloadAnalysis"),
    (K.UNIT_THROUGHPUT, "below"): Entry(
        ("{unit:up} busiest, at {share:pct} of peak",),
        ("{unit:up} is the busiest unit, under the threshold: the findings below say what holds the kernel back.",
         *_ISSUE_ACTIVE,
         " The {roof_label} roof is only at {roof_share:pct}.",
         " The report holds one direction of DRAM traffic, so DRAM may be busier.{one_direction}", *_MIXED),
        "SpeedOfLight"),
    (K.INTENSITY_GAP, "gap"): Entry(
        ("{gap:x} more FLOP per {level} byte would reach the compute roof",),
        ("It does {intensity:.3g} FLOP per {level} byte; the ridge point is {ridge:.3g}.",
         " Its FP ceilings leave {kept_gap:x} to reach what they allow.",
         " {busiest_label:up}, at {busiest_share:pct}, saturates first, once the bytes fall about {after:x}.",
         (" DRAM read {once:.2f}× the bytes its loads asked for: it reads each byte about once.",
          " DRAM read {once_l2:.2f}× what L1 missed, L2 hit {l2_read_hit:pct}: DRAM sends each byte about once.")),
        "SpeedOfLight, MemoryWorkloadAnalysis"),
    # Below every limit.
    (K.LATENCY, "idle"): Entry(
        ("Latency: SMs idle {idle:pct}, busiest limit at {share:pct}",),
        (("SMs were idle {idle:pct} of the time; {grid:n} blocks are {waves:.2f} waves of {slots:n}, the last "
          "{last_fill:pct} full.",
          "SMs were idle {idle:pct} of the time: ramp-up, drain or uneven blocks in {waves:.2f} whole waves of "
          "{slots:n}.",
          "The SMs had no warp {idle:pct} of the time: ramp-up, drain, a partial last wave or too few blocks."),
         " Busiest limit: {label} at {share:pct}.",
         *_OCCUPANCY, *_LIMITED, *_TOP_STALL, *_ALLOWED,
         " Part of it may be the partial last wave.{tail_part}"),
        "SpeedOfLight, LaunchStats, Occupancy"),
    (K.LATENCY, "full"): Entry(
        ("Latency: {label} at {share:pct}",),
        ("Achieved occupancy is {achieved:pct} of a theoretical {theoretical:pct}: the SMs are nearly full of warps",
         (".{stalls_unmeasured}", ", so stalls within each warp hold it back."),
         *_STALLS, *_ALLOWED, " Part of it may be the partial last wave.{tail_part}"),
        "WarpStateStats, Occupancy"),
    (K.LATENCY, "at_allowed"): Entry(
        ("Latency: {label} at {share:pct}",),
        ("Achieved occupancy is {achieved:pct}, as many warps as the launch allows: the theoretical {theoretical:pct} "
         "caps the warps in flight.", *_LIMITED,
         *_STALLS, *_ALLOWED, " Part of it may be the partial last wave.{tail_part}"),
        "Occupancy, WarpStateStats"),
    (K.LATENCY, "fewer_warps"): Entry(
        ("Latency: {label} at {share:pct}",),
        ("Achieved occupancy is {achieved:pct} of a theoretical {theoretical:pct}: fewer warps run than the launch "
         "allows, from an uneven or short grid or a tail.", *_STALLS, *_ALLOWED,
         " Part of it may be the partial last wave.{tail_part}"),
        "Occupancy, LaunchStats"),
    (K.LATENCY, "occupancy_unknown"): Entry(
        ("Latency: {label} at {share:pct}",),
        (("{stalls_unmeasured}", "Stalls, dependencies or too few warps in flight hold the kernel back."),
         *_OCCUPANCY, *_STALLS, *_ALLOWED, " Part of it may be the partial last wave.{tail_part}"),
        "Occupancy, WarpStateStats"),
    (K.LATENCY, "unmeasured"): Entry(
        ("Latency or an unmeasured limit: busiest at {share:pct}",),
        ("The busiest limit the report holds, {label}, is at {share:pct}. "
         "The report holds neither Nsight Compute's SM and memory throughputs nor every memory roof, so a limit it "
         "does not measure, L2, L1 or a pipe, may be the real one.", *_STALLS),
        "SpeedOfLight"),
    (K.LATENCY, "no_ceiling"): Entry(
        ("Latency: busiest limit at {share:pct}",),
        ("No resource is near its peak: latency holds the kernel back.", *_OCCUPANCY, *_STALLS),
        "WarpStateStats, Occupancy"),
    # What fewer bytes can give.
    (K.REUSE, "misses"): Entry(
        ("Only {hit:pct} of L2 lookups hit: most go to DRAM",),
        ("Only {hit:pct} of L2 sector lookups hit, so most requests go on to DRAM.",),
        "MemoryWorkloadAnalysis"),
    (K.REUSE, "reads_once"): Entry(
        ("L2 hits {hit:pct}, and the kernel reads each byte about once",),
        (("Only {hit:pct} of L2 sector lookups hit, and DRAM read {once:.2f}× the bytes its loads asked for: no cache "
          "could serve a second read, so tiling has nothing to reuse.",
          "Only {hit:pct} of L2 sector lookups hit, and DRAM read {once_l2:.2f}× the bytes L1 asked L2 for: L1 "
          "served the re-reads, and tiling has nothing more to keep from DRAM."),),
        "MemoryWorkloadAnalysis"),
    (K.LOCAL_MEMORY, "spills"): Entry(
        (("Local memory: at least {spill_share:pct} of {spill_level} bytes{spill_at_least}",
          "Local memory: about {spill_share:pct} of {spill_level} traffic{spill_about}",
          "{share:pct} of memory instructions are local: spills or arrays",
          "{local:n} local loads and stores: spills or local arrays"),),
        ("{local:n} ", "of {total:n} ", "global and local memory instructions, warp level, are local loads and "
         "stores", ", with {regs:n} registers per thread", ": register spills or a local array.", *_LOCAL_LEVELS),
        "MemoryWorkloadAnalysis, SourceCounters"),
    (K.FP64_DIVISION, "refinement"): Entry(
        ("FP64 divisions: about {share:pct} of FP64 instructions",),
        ("{starts:n} MUFU.RCP64H ran (warp level): one starts each FP64 division or reciprocal, again on CUDA's "
         "slow path. With {per:n} DFMA after each, divisions make about {share:pct} of the {fp64:n} FP64 "
         "instructions. Multiplying by a reciprocal computed once drops those DFMA; the result may differ in the "
         "last bit.",),
        "InstructionStats"),
    (K.TAIL_EFFECT, "uniform"): Entry(
        _TAIL_HEADLINE,
        (*_WAVES, *_LIMITED, " With equal block times, the last wave takes {uniform:pct} of the run for {work:pct} of "
         "the work."),
        "LaunchStats, Occupancy"),
    (K.TAIL_EFFECT, "occupancy"): Entry(
        _TAIL_HEADLINE,
        (*_WAVES, *_LIMITED, " Achieved occupancy, {achieved:pct} of a theoretical {theoretical:pct}, puts the last "
         "wave at most at {tail_share:pct} of the run."),
        "LaunchStats, Occupancy"),
    (K.TAIL_EFFECT, "idle"): Entry(
        _TAIL_HEADLINE,
        (*_WAVES, *_LIMITED, " The last leaves {idle_sms:n} of {sms:n} SMs without a block; SMs were active "
         "{active:pct} of the time, so it takes at most {tail_share:pct} of the run."),
        "LaunchStats, Occupancy"),
    (K.TAIL_EFFECT, "uneven"): Entry(
        ("Blocks end unevenly: occupancy {achieved:pct}, under the last wave's {tail_occupancy:pct}",),
        (("{grid:n} blocks on {slots:n} block slots make {waves:.2f} waves.",
          "The grid's {grid:n} blocks make {waves:.2f} waves of about {per_wave:n} blocks."),
         " With equal block times, the full waves would keep {theoretical:pct} of the warp slots busy and "
         "even the last wave {tail_occupancy:pct}; Nsight Compute measured {achieved:pct}. Blocks, or warps within "
         "them, run for unequal times, so whole waves bound no gain."),
        "Occupancy, LaunchStats"),
    # Ceilings under a limit: what caps it.
    (K.FMA_BALANCE, "cap"): Entry(
        ("{precision} mix {fma_share:pct} FMA: {caps} capped at {factor:pct}",),
        ("An add or a multiply does one FLOP in an issue slot, an FMA two: with {fma_share:pct} FMA, the mix reaches "
         "at most {factor:pct} of {caps}.", *_CO, *_LISTED, *_GROUP),
        "InstructionStats"),
    (K.ISSUE_SHARE, "cap"): Entry(
        ("{precision} is {fp_share:pct} of instructions: {caps} capped at {factor:pct}",),
        ("Integer, address, memory and control instructions take the other issue slots, so the {precision} pipe "
         "reaches at most {factor:pct} of its peak.", " The issue rate is assumed: 4 per SM per cycle.{assumed}",
         *_CO, *_LISTED, *_GROUP),
        "InstructionStats"),
    (K.LANE_EFFICIENCY, "cap"): Entry(
        (("{lanes:.1f} of 32 lanes useful: {idle_lanes:pct} of issued lanes idle",
          "{lanes:.1f} of 32 lanes useful: {caps} capped at {factor:pct}"),),
        ("On average {lanes:.1f} of a warp's 32 lanes do useful work per instruction, from divergence and "
         "predication.", *_CO, *_LISTED, *_GROUP),
        "WarpStateStats, SourceCounters"),
    (K.TENSOR_SHARE, "cap"): Entry(
        ("{tensor_share:pct} FLOP on tensor cores: {caps} capped at {factor:pct}",),
        ("The rest of the arithmetic runs on the CUDA cores, far below the tensor roof.", *_CO, *_LISTED, *_GROUP),
        "ComputeWorkloadAnalysis"),
    (K.SECTOR_USE, "cap"): Entry(
        # The cap is on the bytes used, not on those moved (which may be past it): the headline says the share used.
        (("{worst_op:up} use {worst_bytes:.1f}/32 B a sector: {factor:pct} of {level} bytes used",
          "{worst_op:up} use {worst_bytes:.1f}/32 bytes a sector"),),
        ("Global {worst_op}", ", {worst_share:pct} of the global sectors,", " use {worst_bytes:.1f} of every 32 bytes "
         "fetched", "; {level} moved {moved:n} bytes for them", ".", " They cap {also_level} at {also_factor:pct} too.",
         *_NO_ROOF, " The bytes they use are {used:pct} of the {level} roof.", *_CO, *_LISTED, *_GROUP),
        "MemoryWorkloadAnalysis, SourceCounters"),
    (K.COALESCING, "cap"): Entry(
        (("Uncoalesced global accesses: {caps} capped at {factor:pct}",
          "Uncoalesced global accesses: {factor:pct} of L1 sectors needed"),),
        ("Requests touch more sectors than their accesses need; only {factor:pct} of L1's global sectors are needed.",
         *_NO_ROOF, *_CO, *_LISTED, *_GROUP),
        "MemoryWorkloadAnalysis, SourceCounters"),
    (K.BANK_CONFLICTS, "cap"): Entry(
        (("{conflict_share:pct} of shared wavefronts conflict: {caps} capped at {factor:pct}",
          "{conflict_share:pct} of shared wavefronts conflict"),),
        ("{conflicts:n} of {wavefronts:n} shared-memory wavefronts are bank conflicts, Nsight Compute's count.",
         *_NO_ROOF, *_CO, *_LISTED, *_GROUP),
        "MemoryWorkloadAnalysis"),
}

NO_LIMIT = ("No limit: the report holds neither byte nor FLOP counts with their peaks, nor Nsight Compute's unit "
            "throughputs. Collect them as the missing list says.")

_ANY = "*"
NEXT_STEPS: dict[tuple[str, str], Template] = {
    (K.TOO_LITTLE_WORK, "split"): ("Split the same work into at least {held:n} blocks, or batch calls into one "
                                   "launch.",),
    (K.TOO_LITTLE_WORK, "tiny"): ("Batch or fuse this short launch with its neighbours: launch overhead is much of "
                                  "its cost.",),
    (K.TOO_LITTLE_WORK, "tiny_idle"): ("Fill the {idle_sms:n} idle SMs: split the work into at least {sms:n} blocks, "
                                       "or batch it with its neighbours.",),
    (K.TOO_LITTLE_WORK, "more"): ("Give the launch more work: a larger grid, batched calls, or fusion with its "
                                  "neighbours.",),
    (K.AT_LIMIT, "fewer_bytes"): ("Move fewer bytes through {limit}: fuse kernels, reuse tiles on chip, or store "
                                  "narrower types.",),
    (K.AT_LIMIT, "fewer_bytes_short"): ("Move fewer bytes through {limit}; wider, independent loads reach its last "
                                        "{rest:pct}.",),
    (K.AT_LIMIT, "fewer_bytes_once"): ("Move fewer bytes through {limit}: fuse with neighbours or store narrower "
                                       "types; each byte is read about once.",),
    (K.AT_LIMIT, "fewer_bytes_once_short"): ("Fuse with neighbours or store narrower types; wider, independent loads "
                                             "reach {limit}'s last {rest:pct}.",),
    (K.AT_LIMIT, "less_work"): ("Do less {limit} work per result: fewer or cheaper instructions.",),
    (K.AT_LIMIT, "less_work_short"): ("Do less {limit} work; more independent instructions per thread reach its "
                                      "last {rest:pct}.",),
    (K.INTENSITY_GAP, "reuse"): ("Move fewer bytes per FLOP: fuse with neighbours, reuse tiles on chip, or store "
                                 "narrower types.",),
    (K.INTENSITY_GAP, "reads_once"): ("Fuse with the kernels beside it or store a narrower type: it reads each byte "
                                      "about once.",),
    (K.INTENSITY_GAP, "batch"): ("Batch about {gap:x} more rows per weight byte, or tile and fuse to move fewer "
                                 "bytes.",),
    (K.LATENCY, "idle"): ("Keep every SM busy the whole run", (", ≤{step_x:x}:", ":"), " whole waves, even blocks",
                          ("{long_idle}.", ", or fuse short kernels.")),
    (K.LATENCY, "in_flight"): ("Put more independent work in flight per warp: issue loads early, unroll, break "
                               "dependent chains.",),
    (K.LATENCY, "registers"): ("Cut registers per thread", (" to {fit_regs:n} or fewer", " below {regs:n}"),
                               (" with __launch_bounds__: {fit_warps:n} warps per SM, not {warps:n}, ≤{step_x:x}.",
                                " with __launch_bounds__ or fewer live values: {fit_warps:n} warps per SM, not "
                                "{warps:n}.", " with __launch_bounds__ or fewer live values, to fit more warps.")),
    (K.LATENCY, "shared_memory"): ("Use less shared memory per block, smaller tiles or a larger carve-out, to fit "
                                   "more blocks.",),
    (K.LATENCY, "block_limit"): ("Use larger blocks: an SM runs at most {occ_blocks:n} blocks",
                                 ("; {next_by} then allow {next_warps:n} warps, not {warps:n}, ≤{step_x:x}.",
                                  "; {next_by} then allow {next_warps:n} warps, not {warps:n}.", " at once.")),
    (K.LATENCY, "warp_slots"): ("Pick a block size that fills the SM's warp slots in whole blocks.",),
    (K.LATENCY, "occupancy"): ("Raise the theoretical occupancy of {theoretical:pct}: the Occupancy section names "
                               "its limiter.",),
    (K.LATENCY, "more_warps"): ("Give each SM more independent work: more blocks, or more instructions in flight "
                                "per warp.",),
    (K.LATENCY, "collect"): ("Collect the SpeedOfLight section to tell latency from a limit this report did not "
                             "measure.",),
    # The stall reason that leads the stall cycles: lever stall_<reason> (knowledge.stalls gives each reason's).
    **{(K.LATENCY, f"stall_{reason}"): (step,) for reason, step in {
        "long_scoreboard": "Hide load latency: issue loads early, keep several in flight, reuse data on chip.",
        "barrier": "Wait less at __syncthreads: balance work across a block's warps, or sync less often.",
        "short_scoreboard": "Wait less on shared memory and special functions: avoid bank conflicts, reuse registers.",
        "mio_throttle": "Issue fewer shared-memory and special-function instructions: wider accesses, no conflicts.",
        "lg_throttle": "Issue fewer, wider global and local accesses: 8- or 16-byte vectors, no register spills.",
        "math_pipe_throttle": "Do less arithmetic on the busiest math pipe, or move some of it to another pipe.",
        "wait": "Break dependent chains: interleave independent work and unroll so results are ready when used.",
        "not_selected": "Issue fewer instructions per result: ready warps wait for issue slots, not for data.",
        "branch_resolving": "Use fewer, warp-uniform branches: predicate short conditionals instead of jumping.",
        "no_instruction": "Shrink the hot code to fit the instruction cache: less unrolling and inlining.",
        "imc_miss": "Read fewer distinct constants, or load them into registers before the hot loop.",
        "drain": "Store less at the end of each warp, or spread the stores over its run.",
        "membar": "Use fewer memory fences, or narrow them to block scope.",
        "dispatch_stall": "Balance the instruction mix across pipes so the dispatcher can pass each one on.",
        "sleeping": "Sleep less: shorten nanosleep back-offs and warp-level barrier waits.",
        "tex_throttle": "Issue fewer texture fetches, or use global loads where nothing is filtered.",
        "gmma": "Keep the warpgroup MMAs fed: deepen the pipeline of shared-memory tiles ahead of them.",
        "warpgroup_arrive": "Balance the work between warpgroup barriers so warpgroups arrive together.",
        "source": "Find the stalling instructions on the Source page: this stall reason has no single fix.",
    }.items()},
    (K.REUSE, "tile"): ("Tile or fuse so that data is reused while it is in L2 or shared memory.",),
    (K.REUSE, "fuse"): ("Move fewer bytes in all: fuse with neighbouring kernels or store a narrower type.",),
    (K.LOCAL_MEMORY, "registers"): ("Keep values out of local memory: index local arrays with constants, shrink "
                                    "per-thread tiles", ", allow more than {raise_regs:n} registers", "."),
    (K.TAIL_EFFECT, "whole_waves"): (("Launch {grid_up:n} blocks, {whole:n} full waves, or {grid_down:n} with more "
                                      "work each, instead of {grid:n}.",
                                      "Launch {grid_up:n} blocks, {whole:n} full waves, instead of {grid:n}.",
                                      "Size the grid to a multiple of {per_wave:n} blocks, or use more, smaller "
                                      "blocks.", "Launch whole waves: size the grid to a multiple of the blocks that "
                                      "fit at once."),),
    (K.TAIL_EFFECT, "even_work"): ("Even out the work per block and warp: split long items, sort them by size, or "
                                   "use a work queue.",),
    (K.TOO_LITTLE_WORK, "one_wave"): ("Launch {grid_up:n} blocks, one full wave, instead of {grid:n}: split the "
                                      "same work finer.",),
    (K.TAIL_EFFECT, "library_grid"): ("Try another algorithm or library call, or fuse it: the grid is {library}'s "
                                      "choice.",),
    (K.FMA_BALANCE, "fuse"): ("Fuse multiplies and adds into FMA: contract expressions and keep fast-math "
                              "contraction on.",),
    (K.FMA_BALANCE, "no_pairs"): ("Cut {precision} instructions per result: its {alone} have nothing to pair into "
                                  "FMA.",),
    (K.ISSUE_SHARE, "vector"): ("Cut non-FP instructions: unroll loops, hoist index arithmetic, use vector loads, "
                                "precompute addresses.",),
    (K.ISSUE_SHARE, "no_loads"): ("Cut non-FP instructions: unroll loops, hoist index arithmetic, precompute "
                                  "addresses.",),
    (K.LANE_EFFICIENCY, "uniform"): ("Make branches warp-uniform: sort or bucket work so a warp's threads take one "
                                     "path.",),
    (K.TENSOR_SHARE, "move"): ("Move the remaining arithmetic, epilogues and reductions, onto tensor cores or fuse "
                               "it.",),
    (K.SECTOR_USE, "adjacent"): ("Make adjacent threads access adjacent addresses: structure of arrays, or stage "
                                 "through shared memory.",),
    (K.COALESCING, "coalesce"): ("Let consecutive threads access consecutive, aligned addresses; use 8- or 16-byte "
                                 "vector accesses.",),
    (K.BANK_CONFLICTS, "pad"): ("Pad shared tiles by one element per row, or swizzle, so a warp hits 32 banks.",),
    (_ANY, "spills"): (("Remove the local-memory traffic first: at least {spill_share:pct} of {spill_level}'s bytes"
                        " are local.{spill_at_least}", "Remove the local-memory traffic first: about "
                        "{spill_share:pct} of {spill_level}'s traffic is local."),),
    (_ANY, "split_vector"): ("Merge the {split_n:n} {split_op} at {split_base} {split_first} to {split_last} into one "
                             "{split_whole:n}-byte access, {split_whole:n}-byte aligned.",),
    (_ANY, "library"): ("Try another algorithm, shape or precision, or fuse the call: this is {library}'s own "
                        "kernel.",),
}

# The first segment of a bound note that states there is none (`why_none` is the rest: the page says "No bound").
_NONE, _NONE_Q = "none: ", "none "
BASES: dict[str, Template] = {
    "roof_over_ceiling": ("roof ÷ ceiling = 1 / {factor:.2f}",),
    "sector_bytes": ("{level}'s bytes for these accesses ÷ the bytes they use = 1 / {factor:.2f}",),
    "lanes": ("32 lanes ÷ useful lanes = 1 / {factor:.2f}",),
    "lanes_apart": ("counted apart from the latency finding",),
    "fusion": ("instructions now ÷ after fusing {pairs:n} add-multiply pairs: {inst_now:n} ÷ {inst_after:n}",),
    "no_pairs": (_NONE, "no add and multiply pair to fuse",),
    "capped_other": ("capped at {other_x:x} by {other_label} at {other_share:pct}, whose work this fix leaves",),
    "other_bounds": (_NONE, "{other_label}, at {other_share:pct}, bounds the kernel and this fix leaves its work",),
    "capped_busiest": ("capped at {top_x:x} by the busiest limit, {top_label}",),
    "listed": (_NONE, "the busiest limit is {top_label}; the gain is a share of the run the report does not "
               "measure",),
    "group_part": ("for the group, only its launches with the cap gain: {part_share:pct} of its time",),
    "spread": ("blocks at once ÷ blocks = {held:n} / {grid:n}, never past the busiest limit's headroom",),
    "more_work": (_NONE, "it depends on how much more work each launch is given",),
    "tiny": ("under 20 µs launch overhead is of the order of the run",),
    "no_waves_figure": ("the report lacks launch__waves_per_multiprocessor",),
    "at_limit": (_NONE, "at its limit, only less work at this roof makes it faster",),
    # (the headline holds how far the roof or peak is: "≤1.45× left")
    "at_limit_short": (_NONE, "less work at this roof, or more work in flight, makes it faster",),
    "gap_bounds": (_NONE_Q, "at this intensity: the intensity-gap finding bounds fewer bytes",),
    "apart_tail": ("apart from the partial last wave",),
    "unit_at_limit": (_NONE, "at its limit, only less work for this unit makes it faster",),
    "unit_short": (_NONE, "less work for this unit, or more work in flight, makes it faster",),
    "below_threshold": (_NONE, "below the threshold, see the latency finding",),
    "below_ceilings": (_NONE, "below the threshold, the ceiling findings explain the gap",),
    "compute_over_achieved": ("compute roof ÷ achieved FLOP/s",),
    "with_ceilings": ("compute roof × its FP ceilings ÷ achieved FLOP/s",),
    "capped_arith": ("capped at {cap_x:x} by {cap_label} at {cap_share:pct}, whose work fewer bytes leave",),
    "no_headroom": (_NONE, "the compute side leaves no headroom above what the kernel reaches",),
    "reads_once": (_NONE_Q, "for this kernel alone: it reads each byte about once, so only fusion or a narrower type "
                   "moves fewer bytes",),
    "ceilings_over_reached": ("what the ceilings allow ÷ what the kernel reaches",),
    "peak_over_share": ("the unit's peak ÷ its busy share: how far hiding latency takes the same instructions",),
    "unmeasured": (_NONE, "an unmeasured limit may saturate first",),
    "roof_over_reached": ("roof ÷ what the kernel reaches",),
    "tail_within": ("the tail-effect finding's ≤{tail_bound:x} is part of it, not more on top",),
    "hit_rate_unknown": (_NONE, "the hit rate a better tiling reaches is not known",),
    "fusion_unknown": (_NONE, "the bytes fusion or a narrower type removes are not in the report",),
    "local_cost": (_NONE, "local bytes are not most of the bytes of a limit near the busiest",),
    "spill_leaves": ("1 / the busiest share the fix leaves: {other_label} at {other_share:pct}",),
    "division_leaves": ("1 / the busiest share of the limits divisions do not use: {other_label} at "
                        "{other_share:pct}",),
    "division_unbounded": (_NONE, "no limit the divisions do not use is measured",),
    "spill_unbounded": (_NONE, "the local share is a lower bound, and no limit the fix leaves is known",),
    "spills_bound": (_NONE_Q, "at these bytes: the local-memory finding bounds removing the spills",),
    "not_material": (_NONE, "these accesses move {material_share:pct} of {material_level}'s bytes, under a tenth",),
    "no_roof": (_NONE, "the report gives no {level} roof for this to cap",),
    "uniform_waves": ("waves rounded up ÷ waves = {whole:n} / {waves:.2f}, for equal block times",),
    "uneven_blocks": (_NONE, "the achieved occupancy rules out the equal block times that whole waves need",),
    "measured_waves": ("the full waves' pace over all the work: {whole_less:n} / ((1 − {tail_share:.2f}) × "
                       "{waves:.2f})",),
}

_ALIKE = ("; {alike:n} more hold as much", "; one more holds as much{alike_one}",
          "; {alike_more:n} or more hold as much")

# The pages' own words around the findings (`page_words`); their figures are the views' texts, already formatted.
PAGE_WORDS: dict[str, Template] = {
    # a finding's bound in a sentence (a finding's `worth`): with a speed-up, or the bound note as it is
    "worth": ("Up to {speedup} faster", " ({bound})", ", at most {gain} of the GPU time", "."),
    "no_bound": ("No bound: {bound}.",),
    # "Worth most to the program" (Markdown): a finding's gain, or the share of the kernel with the most time
    "worth_gain": ("{speedup} faster, worth up to {gain} of GPU time",),
    "worth_largest": ("{share} of GPU time, the most of any kernel", ("; no speed-up projected: {bound}",
                                                                    "; no speed-up projected")),
    # the instruction that holds most of a finding's counter: after its Markdown item, and in the verdict
    # (`alike`: the instructions after it with the same share, among the top ones listed: "or more" where all are)
    "top_instruction_md": (" Top instruction: ", ("{sass} at {place}", "at {place}"), " ({share} of the {counter}",
                           ", {source}", _ALIKE, ")."),
    "top_instruction": (("At {sass} {place}", "At {place}"), ": {share} of the {counter}", " ({source})", _ALIKE),
    # the limit named where every limit is under the too-little-work share (`views.labels`)
    "nothing_busy": ("nothing is busy: every limit under {threshold:.0%} of its peak",),
    # a report of more than `api.analysis.LAUNCH_FINDINGS_UP_TO` launches: where its findings come from
    "findings_by_group": ("Findings come per kernel, from its longest launch: ",
                          ("{reports} has {launches:,} launches.", "{count} reports have over {limit:,} launches."),
                          " Add --launch-findings for each launch's own."),
}


def page_words(key: str, figures: Mapping[str, Figure]) -> str:
    """The page's words of `key` (`PAGE_WORDS`), filled: a segment whose figure is None drops."""
    return fill(PAGE_WORDS[key], figures)


def entry(kind: str, variant: str) -> Entry:
    return CATALOG[(Kind(kind), variant)]


def next_step_template(kind: str, lever: str | None) -> Template | None:
    """The next step's template of a lever: the kind's own, the unit table's for a busy unit, or any kind's."""
    if lever is None:
        return None
    if (kind, lever) in NEXT_STEPS:
        return NEXT_STEPS[(kind, lever)]
    if (_ANY, lever) in NEXT_STEPS:
        return NEXT_STEPS[(_ANY, lever)]
    return (UNIT_STEPS[lever],)


def words(kind: str, variant: str, lever: str | None, figures: Mapping[str, Figure],
          basis: tuple[str, ...] = ()) -> Words:
    """A finding's words, from its kind, variant, lever, figures and bound basis."""
    e = entry(kind, variant)
    step = next_step_template(kind, lever)
    bound = "; ".join(text for b in basis if (text := fill(BASES[b], figures)))
    why_none = "; ".join(text for b in basis
                         if BASES[b][0] in (_NONE, _NONE_Q) and (text := fill(BASES[b][1:], figures)))
    return Words(first_upper(fill(e.headline, figures)), None if step is None else fill(step, figures) or None,
                 fill(e.detail, figures).strip(), bound, e.section, why_none)


def kind_label(kind: str) -> str:
    """A kind as the tables name it: "intensity gap"."""
    return kind.replace("_", " ")


def _shown(template: Template) -> str:
    """A template as the reference shows it: alternatives joined by " | "."""
    return "".join(s if isinstance(s, str) else " | ".join(s) for s in template).strip()


def reference() -> str:
    """The findings reference (docs/findings.md), from this catalog: per kind, what each variant says and each
    lever's next step; then how bounds are stated. `{name:spec}` is a figure; a sentence with a figure the
    finding lacks is left out."""
    out = ["# Findings reference", "",
           "Generated from `ncu_roofline/knowledge/catalog.py`; do not edit by hand "
           "(`NCU_ROOFLINE_REGOLD=1 python -m pytest tests/test_catalog.py` writes it).", "",
           "Each finding in the JSON `diagnosis` lists has a `kind`, a `variant` (what was observed), a `lever` "
           "(what to do; null when nothing is), `figures` (the numbers below in braces), and the words: "
           "`headline`, `next_step`, `detail`, `bound_note`.", ""]
    for kind in Kind:
        out += [f"## `{kind.value}`", ""]
        for (k, variant), e in CATALOG.items():
            if k == kind:
                out += [f"- variant `{variant}` ({e.section})", f"  - headline: {_shown(e.headline)}",
                        f"  - detail: {_shown(e.detail)}"]
        levers = [(lever, t) for (k, lever), t in NEXT_STEPS.items() if k == kind.value]
        for lever, t in levers:
            out.append(f"- lever `{lever}`: {_shown(t)}")
        if kind == Kind.UNIT_THROUGHPUT:
            out.append("- levers: one per unit, in `ncu_roofline/knowledge/unit_steps.py`")
        out.append("")
    out += ["## Any kind", ""] + [f"- lever `{lever}`: {_shown(t)}" for (k, lever), t in NEXT_STEPS.items()
                                  if k == _ANY]
    out += ["", "## Bounds", ""] + [f"- `{key}`: {_shown(t)}" for key, t in BASES.items()]
    return "\n".join(out) + "\n"
