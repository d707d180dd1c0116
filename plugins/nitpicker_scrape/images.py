"""Images per device preset: resize the viewport, scroll so lazy images load, wait (bounded), collect."""

from __future__ import annotations

import asyncio
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
MAX_SCROLL_STEPS = 200
SCROLL_STEP_MS = 60

# What loads when scrolled into view: native lazy loading and the data-* / class conventions of script loaders
LAZY_SELECTOR = (
    'img[loading="lazy" i], iframe[loading="lazy" i], [data-src], [data-srcset], [data-lazy], [data-lazy-src], '
    '[data-original], [data-bg], [class*="lazy" i]'
)
# Step through the page one viewport at a time so IntersectionObserver-based loaders fire (two frames a step), then
# the end; a page without lazy candidates is not scrolled at all (its images load on their own): returns whether
# it scrolled
SCROLL_JS = """async ([maxSteps, stepMs, lazy]) => {
  if (!document.querySelector(lazy)) return false;
  const height = () => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0);
  // after each step, two frames: the one that lays out the new position and queues the observers' callbacks,
  // and the next, by which they have run (and started their images); stepMs caps a step when frames stall
  const frames = () => new Promise((r) => {
    const cap = setTimeout(r, stepMs);
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(cap); r(); }));
  });
  for (let i = 0, y = 0; i < maxSteps && y < height(); i++, y += window.innerHeight) {
    window.scrollTo(0, y);
    await frames();
  }
  window.scrollTo(0, height());
  await frames();
  return true;
}"""

WAIT_IMAGES_JS = """async (ms) => {
  const pending = [...document.images].filter((img) => !img.complete);
  const settle = (img) => new Promise((r) => { img.addEventListener("load", r, {once: true}); img.addEventListener("error", r, {once: true}); });
  await Promise.race([Promise.all(pending.map(settle)), new Promise((r) => setTimeout(r, ms))]);
  return pending.filter((img) => !img.complete).length;
}"""
# One round trip per preset: scroll when there is lazy content, wait for the images (bounded), read them
CAPTURE_JS = f"""async ([maxSteps, stepMs, lazy, waitMs]) => {{
  const scroll = ({SCROLL_JS});
  const wait = ({WAIT_IMAGES_JS});
  const collect = ({IMAGES_JS.strip()});
  const scrolled = await scroll([maxSteps, stepMs, lazy]);
  await wait(waitMs);
  const found = collect();
  if (scrolled) window.scrollTo(0, 0);
  return found;
}}"""


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


async def capture_preset(page: Page, name: str, image_wait: float) -> list[Image]:
    """Every ``<img>`` of the page as seen with preset ``name``."""
    if name not in PRESETS:
        raise ValueError(f"unknown device preset {name!r} (known: {', '.join(PRESETS)})")
    width, _dpr = PRESETS[name]
    await page.set_viewport_size(viewport_for(width))
    raw = await page.evaluate(
        CAPTURE_JS, [MAX_SCROLL_STEPS, SCROLL_STEP_MS, LAZY_SELECTOR, int(image_wait * 1000)]
    )
    return [_image(item, width) for item in raw or []]


async def capture(
    page: Page, presets: list[str], *, preset_timeout: float, image_wait: float = 3.0
) -> tuple[list[Image], list[PageError]]:
    """Images of every preset; a preset that fails or overruns becomes a PageError, the others still count."""
    images: list[Image] = []
    errors: list[PageError] = []
    for name in presets:
        try:
            images += await asyncio.wait_for(
                capture_preset(page, name, min(image_wait, preset_timeout / 2)), preset_timeout
            )
        except TimeoutError:
            errors.append(PageError(step=f"images:{name}", message=f"timed out after {preset_timeout:g} s"))
        except Exception as exc:  # noqa: BLE001 - any failure of one preset is recorded, not fatal
            errors.append(PageError(step=f"images:{name}", message=_one_line(exc)))
    return images, errors


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")
