"""`ncu-roofline metrics`: the ncu options that collect everything the tool can use."""

from __future__ import annotations

import click

from ..knowledge import recipes as R


@click.command()
@click.option("--format", "fmt", type=click.Choice(["options", "list"]), default="options",
              show_default=True, help="'options': ncu command-line options; 'list': one metric per line.")
def metrics(fmt: str) -> None:
    """Print the `ncu` options that make a capture complete for ncu-roofline.

    Example: ncu $(ncu-roofline metrics) -o capture ./my_app
    """
    if fmt == "list":
        for name in R.NCU_METRICS:
            click.echo(name)
        return
    sections = " ".join(f"--section {s}" for s in R.NCU_SECTIONS)
    click.echo(f"{sections} --metrics {','.join(R.NCU_METRICS)}")
