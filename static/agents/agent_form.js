// The agent page's preview follows the name and colour fields as the owner types.
document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form.agent-form")) {
    const preview = form.querySelector(".agent-preview");
    const name = form.querySelector("input[name=name]");
    const colour = form.querySelector("input[name=colour]");
    if (!preview) continue;
    const update = () => {
      if (name) for (const el of preview.querySelectorAll("[data-preview=name]")) el.textContent = name.value.trim() || el.dataset.unnamed || "";
      if (colour) preview.style.setProperty("--agent-colour", colour.value);
    };
    name?.addEventListener("input", update);
    colour?.addEventListener("input", update);
  }
});
