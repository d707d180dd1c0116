// Runs before the page paints: apply the remembered theme (or the system's) so the page never flashes.
"use strict";
(function () {
  let theme = null;
  try { theme = localStorage.getItem("nitpicker-theme"); } catch (e) { /* storage off: follow the system */ }
  if (theme !== "light" && theme !== "dark") {
    theme = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  document.documentElement.dataset.theme = theme;
})();
