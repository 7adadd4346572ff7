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
