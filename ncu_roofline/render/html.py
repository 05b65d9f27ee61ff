"""HTML: one self-contained page (inline CSS, JS and SVG charts; nothing fetched when opened)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


_PACKAGE_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"  # inside an installed wheel
_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"  # in a source checkout


def templates_dir() -> Path:
    """Where the templates are: inside the installed package, else the source tree's `templates/`."""
    for candidate in (_PACKAGE_TEMPLATES, _SOURCE_TEMPLATES):
        if (candidate / "report.html.j2").is_file():
            return candidate
    raise FileNotFoundError("ncu-roofline's templates are missing from this installation")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One cached, strict, autoescaping jinja2 environment."""
    import jinja2

    from ..views.wording import count

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":")}
    env.filters["plural"] = count  # `{{ n|plural("kernel") }}`: "1 kernel", "3 kernels"
    return env


@functools.lru_cache(maxsize=4)
def asset(name: str) -> str:
    """CSS and JS are inlined raw, never parsed as templates."""
    return (templates_dir() / name).read_text(encoding="utf-8")


def palette_css() -> str:
    """The chart palette as CSS variables, so badges and bars use the chart's colours."""
    from .charts.spec import PALETTE

    pairs = [f"--{name}:{colour};" for name, colour in PALETTE.items() if name is not None]
    return ":root{" + "".join(pairs) + f"--none:{PALETTE[None]};" + "}\n"


def page(template: str, *, title: str, css: str, **context: Any) -> str:
    """A page of `template` (which extends base.html.j2): the shared head, then its own body.

    `css` is the page's own stylesheet, after the palette variables and report.css that every
    page shares.
    """
    from ..version import __version__

    return environment().get_template(template).render(
        page_title=title, generator_version=__version__,
        css=markup(palette_css() + asset("report.css") + css), js=markup(asset("report.js")), **context)


def markup(text: str) -> Any:
    """Text jinja2 must insert as is (already escaped, or CSS/JS of our own)."""
    from markupsafe import Markup

    return Markup(text)

