// Runs inside the rendered page after scrolling: every <img> of the DOM as read (the extract marked them; all
// of them when nothing did) as seen at the current viewport width.
() => {
  const read = window[Symbol.for("nitpicker.read")];
  return [...document.images].filter((img) => !read || read.has(img)).map((img) => {
    const box = img.getBoundingClientRect();
    return {
      src: img.getAttribute("src") || "", current_src: img.currentSrc || img.src || "",
      alt: img.hasAttribute("alt") ? img.getAttribute("alt") : null,
      width: box.width, height: box.height, natural_width: img.naturalWidth, natural_height: img.naturalHeight,
      is_lazy: (img.getAttribute("loading") || "").toLowerCase() === "lazy",
      viewport_width: window.innerWidth, markup: img.outerHTML.slice(0, 2000),
    };
  });
}
