// The copy button next to each command: the only script on the pages (no build step).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button || !navigator.clipboard) return;
  navigator.clipboard.writeText(button.dataset.copy || "").then(() => {
    const label = button.textContent;
    button.textContent = button.dataset.done || "✓";
    setTimeout(() => { button.textContent = label; }, 1500);
  });
});
