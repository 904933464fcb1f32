// The Chinese edition's pages (zh/ in the site) declare their language, so that zh.css gives them
// a CJK font and the browser picks Simplified Chinese glyph forms (scripts/build_book.py).
(function () {
  if (/\/zh\/[^/]*$/.test(window.location.pathname)) {
    document.documentElement.lang = "zh-CN";
  }
})();
