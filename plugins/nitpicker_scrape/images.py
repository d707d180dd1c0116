"""Images per device preset: resize the viewport, scroll so lazy images load, wait (bounded), collect."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from nitpicker_core import Image, PageError

from .extract import IMAGES_JS

if TYPE_CHECKING:
    from playwright.async_api import Page, ViewportSize

# name → (viewport width, device pixel ratio). DPR is fixed per browser context, so it is informative only.
PRESETS: dict[str, tuple[int, int]] = {
    "desktop-compact": (1280, 1),
    "mobile-small": (320, 2),
    "desktop": (1400, 1),
    "tablet": (768, 1),
    "mobile": (375, 2),
    "desktop-hd": (1920, 1),
    "mobile-large": (414, 3),
}
#: waits (no image request in flight for a preset, at most ``stall`` seconds without progress) and returns the
#: URLs of the page's requests that have answered in full
Answered = Callable[[float], Awaitable[list[str]]]
MAX_SCROLL_STEPS = 200
SCROLL_STEP_MS = 60

# What loads when scrolled into view: native lazy loading and the data-* / class conventions of script loaders
LAZY_SELECTOR = (
    'img[loading="lazy" i], iframe[loading="lazy" i], [data-src], [data-srcset], [data-lazy], [data-lazy-src], '
    '[data-original], [data-bg], [class*="lazy" i]'
)
# Two frames: the one that lays out what changed (a scroll position, a viewport width) and queues the observers'
# callbacks, and the next, by which they have run (and started their images). A busy machine draws its frames late,
# and a step that went on without them would leave lazy images behind that a calm one loads: a frame is waited for
# up to FRAME_PATIENCE_MS, and only a page whose frames did not come in that time is stepped at the step's cap
FRAMES_JS = """(() => {
  let cap = null;
  return (patience, stepMs) => new Promise((r) => {
    const timer = setTimeout(() => { cap = stepMs; r(); }, cap ?? patience);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer); r(); }));
  });
})()"""
FRAME_PATIENCE_MS = 2000
# Step through the page one viewport at a time so IntersectionObserver-based loaders fire (two frames a step), then
# the end; a page without lazy candidates is not scrolled at all (its images load on their own): returns whether
# it scrolled
SCROLL_JS = f"""async ([maxSteps, stepMs, lazy, patience]) => {{
  if (!document.querySelector(lazy)) return false;
  const height = () => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0);
  const frames = {FRAMES_JS};
  for (let i = 0, y = 0; i < maxSteps && y < height(); i++, y += window.innerHeight) {{
    window.scrollTo(0, y);
    await frames(patience, stepMs);
  }}
  window.scrollTo(0, height());
  await frames(patience, stepMs);
  return true;
}}"""

#: The property (a Symbol, out of the page's way) under which the extract marks the images of the DOM it read
READ_MARK = 'Symbol.for("nitpicker.read")'
# Before a preset is read: the scroll for lazy content, or else, on a page with a srcset or a <picture>, the frames
# that lay the new width out (the file they pick is chosen then); returns whether it scrolled
PREPARE_JS = f"""async ([maxSteps, stepMs, lazy, patience]) => {{
  const scroll = ({SCROLL_JS});
  if (await scroll([maxSteps, stepMs, lazy, patience])) return true;
  if (document.querySelector("img[srcset], picture > source")) await ({FRAMES_JS})(patience, stepMs);
  return false;
}}"""
# The images of the DOM as read whose file has answered and that have not taken it in yet are waited for (load or
# error, bounded); one whose file was never asked (a lazy image nobody scrolled to, one in a hidden menu) is
# recorded as it is, not waited for. Then they are read, and the page scrolled back to its top
COLLECT_JS = f"""async ([answered, waitMs, scrolled]) => {{
  const read = window[{READ_MARK}];
  const asked = answered === null ? null : new Set(answered);
  const key = (url) => url.split("#")[0];
  const pending = [...document.images].filter((img) => (!read || read.has(img)) && !img.complete
    && (asked === null || asked.has(key(img.currentSrc || img.src))));
  const settle = (img) => new Promise((r) => {{
    img.addEventListener("load", r, {{once: true}}); img.addEventListener("error", r, {{once: true}});
    if (img.complete) r();
  }});
  await Promise.race([Promise.all(pending.map(settle)), new Promise((r) => setTimeout(r, waitMs))]);
  const found = ({IMAGES_JS.strip()})();
  if (scrolled) window.scrollTo(0, 0);
  return found;
}}"""
#: resource types whose requests a preset waits for: what ``<img>`` and ``<picture>`` ask
IMAGE_KINDS = frozenset({"image"})


def viewport_for(width: int) -> ViewportSize:
    """Height = width × 0.75 for desktops, × 1.5 for narrower screens (the original's presets)."""
    return {"width": width, "height": int(width * 0.75) if width > 1000 else int(width * 1.5)}


def _image(raw: dict[str, Any], width: int) -> Image:
    def number(key: str) -> float | None:
        value = raw.get(key)
        return float(value) if isinstance(value, int | float) else None

    natural_w, natural_h = raw.get("natural_width"), raw.get("natural_height")
    return Image(
        src=str(raw.get("src") or ""),
        current_src=str(raw.get("current_src") or ""),
        alt=raw.get("alt"),
        width=number("width"),
        height=number("height"),
        # 0 means "not loaded (yet)": unknown, not a zero-sized picture
        natural_width=int(natural_w) if natural_w else None,
        natural_height=int(natural_h) if natural_h else None,
        is_lazy=bool(raw.get("is_lazy")),
        viewport_width=width,
        markup=str(raw.get("markup") or ""),
    )


async def capture_preset(
    page: Page, name: str, image_wait: float, answered: Answered | None = None
) -> list[Image]:
    """Every ``<img>`` of the page (of the DOM as read) as seen with preset ``name``.

    ``answered(stall)``, when given, waits until no image request of the page is in flight (giving up once none
    started or ended for ``stall`` seconds) and returns the URLs that have answered: the images waited for.
    Without it every image not complete is waited for, ``image_wait`` seconds at most."""
    if name not in PRESETS:
        raise ValueError(f"unknown device preset {name!r} (known: {', '.join(PRESETS)})")
    width, _dpr = PRESETS[name]
    await page.set_viewport_size(viewport_for(width))
    scrolled = await page.evaluate(
        PREPARE_JS, [MAX_SCROLL_STEPS, SCROLL_STEP_MS, LAZY_SELECTOR, FRAME_PATIENCE_MS]
    )
    urls = None if answered is None else sorted(await answered(image_wait))
    raw = await page.evaluate(COLLECT_JS, [urls, int(image_wait * 1000), bool(scrolled)])
    return [_image(item, width) for item in raw or []]


async def capture(
    page: Page,
    presets: list[str],
    *,
    preset_timeout: float,
    image_wait: float = 3.0,
    answered: Answered | None = None,
) -> tuple[list[Image], list[PageError]]:
    """Images of every preset; a preset that fails or overruns becomes a PageError, the others still count."""
    images: list[Image] = []
    errors: list[PageError] = []
    for name in presets:
        try:
            images += await asyncio.wait_for(
                capture_preset(page, name, min(image_wait, preset_timeout / 2), answered), preset_timeout
            )
        except TimeoutError:
            errors.append(PageError(step=f"images:{name}", message=f"timed out after {preset_timeout:g} s"))
        except Exception as exc:  # noqa: BLE001 - any failure of one preset is recorded, not fatal
            errors.append(PageError(step=f"images:{name}", message=_one_line(exc)))
    return images, errors


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
