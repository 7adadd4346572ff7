// A small accessibility and layout audit run in the page (axe-core is not vendored here):
// what WCAG 2.1 AA asks that the issue found missing. Returns a list of problems, [] if none.
() => {
  const problems = [];
  const say = (rule, el, detail) => {
    const id = el && el.tagName ? el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") : "";
    problems.push(`${rule}: ${id} ${detail || ""}`.trim());
  };
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 1 && box.height > 1 && style.visibility !== "hidden" && style.display !== "none";
  };
  const parse = (color) => {
    const m = color.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const luminance = ({ r, g, b }) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (el) => {
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const bg = parse(getComputedStyle(node).backgroundColor);
      if (bg && bg.a >= 0.99) return bg;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  };
  const contrast = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };

  if (!document.documentElement.lang) say("html-has-lang", document.documentElement);
  // The layout viewport's width: on a phone, a page wider than the screen widens the window
  // itself (innerWidth) and is shown zoomed out, so innerWidth cannot tell.
  const screenWidth = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > screenWidth) {
    const wide = [...document.body.querySelectorAll("*")].filter(
      (el) => el.getBoundingClientRect().right > screenWidth + 1 && !el.closest(".visually-hidden")
    );
    // The innermost elements that stick out: the ones to fix.
    const culprits = wide.filter((el) => ![...el.children].some((child) => wide.includes(child)));
    for (const el of culprits.slice(0, 3).concat(culprits.length ? [] : [document.documentElement])) {
      say("no-sideways-scroll", el, `${document.documentElement.scrollWidth} > ${screenWidth}`);
    }
  }
  // Landmarks: one main, one banner, every nav named differently.
  if (document.querySelectorAll("main").length > 1) say("landmark-one-main", document.body);
  const navNames = [...document.querySelectorAll("nav")].map((n) => n.getAttribute("aria-label") || "");
  if (new Set(navNames).size !== navNames.length) say("landmark-unique", document.body, navNames.join("|"));
  // Headings go down one level at a time.
  let level = 0;
  for (const h of document.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    if (!visible(h)) continue;
    const n = Number(h.tagName[1]);
    if (n > level + 1) say("heading-order", h, `h${n} after h${level}`);
    level = n;
  }
  for (const th of document.querySelectorAll("th")) {
    if (!th.textContent.trim() && !th.getAttribute("aria-label")) say("empty-table-header", th);
  }
  // The skip link is the first thing a keyboard reaches, on pages with a menu.
  if (document.querySelector("nav") && !document.querySelector('a.skip-link[href="#main"]')) {
    say("skip-link", document.body);
  }
  // Text contrast: 4.5:1, or 3:1 for large text.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || !el || seen.has(el)) continue;
    seen.add(el);
    if (!visible(el) || el.closest(".visually-hidden, .skip-link, [aria-hidden=true], del, ins")) continue;
    const style = getComputedStyle(el);
    const fg = parse(style.color);
    if (!fg) continue;
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    const ratio = contrast(fg, background(el));
    if (ratio < (large ? 3 : 4.5)) say("color-contrast", el, ratio.toFixed(2));
  }
  // A link inside running text is told apart by more than its colour.
  for (const a of document.querySelectorAll("main p a, main li a, main td a, main dd a")) {
    if (!visible(a) || a.matches(".button, .tag") || a.closest("table.heatmap")) continue;
    const text = a.parentElement.textContent.trim();
    if (text === a.textContent.trim()) continue; // the link is the whole text: nothing to tell it from
    if (!getComputedStyle(a).textDecorationLine.includes("underline")) say("link-in-text-block", a);
  }
  return problems;
}
