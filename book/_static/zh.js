// The Chinese edition's pages (zh/ in the site) declare their language, so that the browser picks
// Simplified Chinese glyph forms and a screen reader speaks Chinese (scripts/build_book.py).
(function () {
  if (/\/zh\/[^/]*$/.test(window.location.pathname)) {
    document.documentElement.lang = "zh-CN";
  }
})();
