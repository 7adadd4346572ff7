// Copy buttons: <button data-copy="element-id">. No inline scripts (the CSP forbids them).
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const text = source.innerText;
  const done = () => {
    const label = button.textContent;
    button.textContent = button.dataset.copied || "Copied";
    button.classList.add("copied");
    setTimeout(() => { button.textContent = label; button.classList.remove("copied"); }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
  } else {
    fallbackCopy(text, done);
  }
});

function fallbackCopy(text, done) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "offscreen";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
  done();
}

// An analysis that finishes while its page polls: move focus to the result and say so in
// the page's live region, so that a keyboard or screen-reader user learns it is there.
document.addEventListener("htmx:afterSettle", () => {
  const result = document.getElementById("analysis-result");
  if (!result || !result.dataset.announce || result.dataset.announced) return;
  result.dataset.announced = "yes";
  const region = document.getElementById("analysis-announce");
  if (region) region.textContent = result.dataset.announce;
  result.focus();
});

// The main menu is open in the page (it works without scripts); on a phone it starts folded.
const menu = document.querySelector("details.menu");
if (menu && window.matchMedia("(max-width: 700px)").matches) menu.open = false;

// A box that scrolls (a long command, a wide table on a phone) takes keyboard focus, so that
// it can be scrolled without a mouse (WCAG 2.1.1); a box that fits gives the focus back.
function focusScrollers() {
  for (const box of document.querySelectorAll("pre, code, .table-scroll, table, [data-scrolls]")) {
    const style = getComputedStyle(box);
    const scrolls = /(auto|scroll)/.test(style.overflowX + style.overflowY)
      && (box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1);
    if (scrolls && !box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.dataset.scrollFocus = "yes";
    } else if (!scrolls && box.dataset.scrollFocus) {
      box.removeAttribute("tabindex");
      delete box.dataset.scrollFocus;
    }
  }
}
focusScrollers();
window.addEventListener("resize", focusScrollers);
document.addEventListener("htmx:afterSettle", focusScrollers);
