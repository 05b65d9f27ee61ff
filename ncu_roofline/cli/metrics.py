"""`ncu-roofline metrics`: the ncu options that collect everything the tool can use, per target."""

from __future__ import annotations

import click

from ..errors import InputError
from ..knowledge.targets import Target, ncu_options, parse_compute_capability, parse_ncu_version
from .common import info, note, verbosity_options


def _target_of_report(path: str) -> Target:
    """The GPU and Nsight Compute release of an existing capture (its first kernel's device)."""
    from ..readers import read_report_isolated

    raw = read_report_isolated(path)  # a damaged capture costs a message, not the process
    cc = next((k.compute_capability for k in raw.kernels if k.compute_capability), None)
    return Target(cc, raw.ncu_version)


@click.command()
@verbosity_options()
@click.option("--format", "fmt", type=click.Choice(["options", "list"]), default="options",
              show_default=True, help="'options': ncu command-line options; 'list': one metric per line.")
@click.option("--arch", metavar="CC", default=None,
              help="Target compute capability (8.0, 9.0, 12.0, sm_90): leave out names that GPU lacks.")
@click.option("--ncu-version", metavar="YYYY.N", default=None,
              help="Target Nsight Compute release (2022.2, 2024.1): leave out sections it lacks.")
@click.option("--from", "from_report", metavar="REPORT", default=None, type=click.Path(dir_okay=False),
              help="Take the GPU and Nsight Compute release from an existing capture.")
def metrics(fmt: str, arch: str | None, ncu_version: str | None, from_report: str | None) -> None:
    """Print the `ncu` options that make a capture complete for ncu-roofline.

    Without --arch/--ncu-version/--from the options suit the newest Nsight Compute on a discrete
    GPU of compute capability 7.0 or later. Notes on what was left out go to standard error.

    \b
    Examples:
      ncu $(ncu-roofline metrics) -o run ./app
      ncu $(ncu-roofline metrics --arch 9.0 --ncu-version 2024.1) -o run ./app
      ncu $(ncu-roofline metrics --from old_run.ncu-rep) -o run ./app
      ncu-roofline metrics --format list --arch sm_80
    """
    target = _target_of_report(from_report) if from_report else Target()
    try:
        cc = parse_compute_capability(arch) if arch else target.compute_capability
        version = ncu_version or target.ncu_version
        if version:
            parse_ncu_version(version)
    except ValueError as exc:
        raise InputError(arch or ncu_version or "", str(exc)) from exc
    options = ncu_options(Target(cc, version))
    info(f"target: compute capability {cc or 'any of 7.0 or later'}, Nsight Compute {version or 'newest'}"
         f"{f' (from {from_report})' if from_report else ''}; {len(options.metrics)} metrics")
    for text in options.notes:
        note(f"note: {text}")
    if fmt == "list":
        for name in options.metrics:
            click.echo(name)
        return
    click.echo(options.command_line())
