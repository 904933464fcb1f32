// Chinese text in JupyterLab (and Notebook 7) without a system CJK font. The package's font subset
// (unified_rl/course/fonts/wqy-microhei-subset.ttf), installed beside this bundle in the extension's
// static folder, becomes a web font limited to CJK characters (unicode-range), put FIRST in the theme's
// UI, content and code font stacks: a Latin character is outside its range and keeps the theme's font
// (and a page without Chinese never downloads it), a Han character is drawn by a system CJK font the
// face names (local()) where the machine has one, else by the shipped subset. First, not last: on a
// static page Chromium 156 left Han text as boxes when a web font after an installed font was still
// loading as the text was laid out, and drew it when the web font came first. Same face as the book's
// (book/_static/zh.css); tests/browser/test_cjk_webfont.py checks which font draws the Chinese.
// No import from JupyterLab: the extension shares no package with the lab and loads in any 4.x.

const NAME = 'unified-rl-cjk-font'; // this extension's folder under share/jupyter/labextensions
const FILE = 'wqy-microhei-subset.ttf';
const FAMILY = 'unified_rl CJK'; // the face's name in CSS; the shipped file's own family differs
// system CJK fonts, preferred where present (macOS, Windows, Linux with Noto or WenQuanYi): full and
// PostScript names, which local() matches
const SYSTEM = ['PingFang SC Regular', 'PingFangSC-Regular', 'Hiragino Sans GB W3', 'HiraginoSansGB-W3',
  'Microsoft YaHei', 'MicrosoftYaHei', 'Noto Sans CJK SC', 'NotoSansCJKsc-Regular', 'Source Han Sans SC Regular',
  'SourceHanSansSC-Regular', 'WenQuanYi Micro Hei', 'WenQuanYiMicroHei'];
const STACKS = ['--jp-ui-font-family', '--jp-content-font-family', '--jp-code-font-family'];
// CJK radicals to ideographs (with CJK punctuation), compatibility ideographs and forms, full-width forms
const RANGE = 'U+2E80-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF';

function fontUrl() {
  const el = document.getElementById('jupyter-config-data');
  const config = el ? JSON.parse(el.textContent || '{}') : {};
  const base = config.fullLabextensionsUrl || `${config.baseUrl || '/'}lab/extensions`;
  return `${base.replace(/\/$/, '')}/${NAME}/static/${FILE}`;
}

function apply(style, face) {
  // read the theme's stacks with this extension's rule out of the way, then put the CJK face first
  style.textContent = face;
  const root = getComputedStyle(document.documentElement);
  const rules = STACKS.map(name => [name, root.getPropertyValue(name).trim()])
    .filter(([, stack]) => stack)
    .map(([name, stack]) => `${name}: "${FAMILY}", ${stack};`);
  // :root:root outranks the theme's :root, whose stylesheet is loaded after this one
  style.textContent = face + (rules.length ? `\n:root:root { ${rules.join(' ')} }` : '');
}

const plugin = {
  id: `${NAME}:plugin`,
  description: 'Draws Chinese text with the font unified_rl ships when the machine has no CJK font.',
  autoStart: true,
  activate: app => {
    const sources = [...SYSTEM.map(f => `local("${f}")`), `url("${fontUrl()}") format("truetype")`];
    const face = `@font-face { font-family: "${FAMILY}"; src: ${sources.join(', ')}; unicode-range: ${RANGE}; }`;
    const style = document.createElement('style');
    style.id = NAME;
    document.head.appendChild(style);
    apply(style, face);
    // the theme's stylesheet arrives (and changes) after activation; the lab marks each on <body>
    new MutationObserver(() => apply(style, face))
      .observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name'] });
    if (app && app.restored) {
      app.restored.then(() => apply(style, face));
    }
  }
};

export default plugin;
