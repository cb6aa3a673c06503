// Who annotates: a name box that remembers the analyst's name in this browser (localStorage).
// The kernel side is workbench.widgets.analyst.AnalystName; every text is set with textContent.
// Once shown, it tells the kernel a page is there (the triage takes its first item then).
const KEY = "workbench.analyst";

function remembered() {
  try {
    return (window.localStorage.getItem(KEY) || "").trim();
  } catch (e) {
    return "";
  }
}

function remember(name) {
  try {
    window.localStorage.setItem(KEY, name);
  } catch (e) {
    // a browser without storage asks again next time
  }
}

function render({ model, el }) {
  el.classList.add("wb-analyst");
  const label = document.createElement("label");
  const input = document.createElement("input");
  const button = document.createElement("button");
  const line = document.createElement("span");
  label.textContent = "Your name";
  input.type = "text";
  input.placeholder = "who is annotating (remembered in this browser)";
  input.setAttribute("aria-label", "Your name");
  button.textContent = "Use this name";
  line.className = "wb-analyst-line";
  label.appendChild(input);
  el.append(label, button, line);

  const submit = () => {
    const name = input.value.trim();
    if (!name) {
      line.textContent = "Type your name first.";
      return;
    }
    model.set("proposed", name);
    model.save_changes();
  };
  button.addEventListener("click", submit);
  input.addEventListener("keydown", (event) => {
    event.stopPropagation();
    if (event.key === "Enter") submit();
  });

  const show = () => {
    const name = model.get("name");
    const fixed = model.get("fixed");
    const asking = !name;
    label.hidden = !asking && fixed;
    button.hidden = !asking && fixed;
    button.textContent = asking ? "Use this name" : "Change name";
    line.textContent = model.get("message");
    el.classList.toggle("wb-analyst-asking", asking);
    if (name && !fixed) remember(name);
  };
  model.on("change:name", show);
  model.on("change:message", show);
  model.on("change:fixed", show);

  const known = remembered();
  if (!model.get("name") && known) {
    model.set("proposed", known);
    model.save_changes();
  }
  show();
  // a page shows the box: the kernel may now take an item (after the name above, in that order)
  model.send({ kind: "page" });
}

export default { render };
