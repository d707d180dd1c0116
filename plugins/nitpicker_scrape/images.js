// Runs inside the rendered page after scrolling: every <img> as seen at the current viewport width.
() => [...document.images].map((img) => {
  const box = img.getBoundingClientRect();
  return {
    src: img.getAttribute("src") || "", current_src: img.currentSrc || img.src || "",
    alt: img.hasAttribute("alt") ? img.getAttribute("alt") : null,
    width: box.width, height: box.height, natural_width: img.naturalWidth, natural_height: img.naturalHeight,
    is_lazy: (img.getAttribute("loading") || "").toLowerCase() === "lazy",
    viewport_width: window.innerWidth, markup: img.outerHTML.slice(0, 2000),
  };
})
