// The demo page: one view per loaded model; each task's output drawn the way its readers read
// it. Plain JavaScript over the JSON API (GET /models, POST /predict/NAME); no libraries.
"use strict";

const EXAMPLES = {
  ner: { text: "John Smith works for the United Nations in New York." },
  sst5: { text: "A gorgeous, witty, seductive movie." },
  srl: { text: "The keeper gave the visitors a map of the park." },
  coref: { text: "Anna met Tom in Paris. She told him that the city was lovely." },
  squad: { question: "Where does Anna live?",
           passage: "Anna lives in Berlin. She moved there from Paris in 2010." },
  snli: { premise: "A man is playing a guitar on stage.",
          hypothesis: "A person is performing music." },
};
const FIELDS = {  // the form of each task: [field, label, multi-line]
  ner: [["text", "Text", true]], sst5: [["text", "Text", true]], srl: [["text", "Text", true]],
  coref: [["text", "Document", true]],
  squad: [["passage", "Passage", true], ["question", "Question", false]],
  snli: [["premise", "Premise", false], ["hypothesis", "Hypothesis", false]],
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function bars(probabilities, best, byValue = true) {
  // one bar per label (most probable first), or in the given order (layer weights)
  const box = el("div", { class: "bars" });
  const entries = Object.entries(probabilities);
  if (byValue) entries.sort((a, b) => b[1] - a[1]);
  for (const [label, p] of entries) {
    const fill = el("span", { class: "fill" });
    fill.style.width = `${Math.round(p * 300)}px`;
    box.append(el("div", { class: `bar${label === best ? " best" : ""}`, "data-label": label,
                           "data-probability": p },
                  el("span", { class: "name" }, label),
                  el("span", { class: "value" }, p.toFixed(3)), fill));
  }
  return box;
}

function tokensWith(tokens, spans, make) {
  // tokens with [start, end] spans (not crossing) wrapped by make(span, children)
  const out = el("div", { class: "sentence" });
  let i = 0;
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  for (const span of sorted) {
    if (span.start < i) continue;  // overlaps an earlier span: skipped
    if (span.start > i) out.append(tokens.slice(i, span.start).join(" ") + " ");
    out.append(make(span, tokens.slice(span.start, span.end + 1).join(" ")), " ");
    i = span.end + 1;
  }
  if (i < tokens.length) out.append(tokens.slice(i).join(" "));
  return out;
}

const RENDER = {
  ner(records) {
    const box = el("div");
    for (const r of records) {
      box.append(tokensWith(r.tokens, r.spans || [], (s, text) => el(
        "mark", { class: `entity ${s.type}`, "data-type": s.type, "data-start": s.start,
                  "data-end": s.end, "data-score": s.score, title: `p = ${s.score}` },
        el("span", { class: "text" }, text), el("span", { class: "type" }, s.type),
        el("span", { class: "score" }, s.score.toFixed(2)))));
    }
    return box;
  },
  sst5(records) {
    const box = el("div");
    for (const r of records) {
      box.append(el("div", { class: "sentence" }, r.tokens.join(" ")),
                 bars(r.probabilities, r.label));
    }
    return box;
  },
  snli(records) {
    const box = el("div");
    for (const r of records) box.append(bars(r.probabilities, r.label));
    return box;
  },
  srl(records) {
    if (!records.length) return el("p", {}, "No predicate with arguments.");
    const table = el("table", { class: "frames" },
                     el("tr", {}, el("th", {}, "Predicate"), el("th", {}, "Arguments")));
    for (const r of records) {
      const args = el("td");
      for (const a of r.arguments) {
        args.append(el("span", { class: "arg", "data-role": a.role }, el("b", {}, a.role), " ",
                       a.text));
      }
      table.append(el("tr", { class: "frame", "data-predicate": r.predicate_index },
                      el("td", {}, r.predicate), args));
    }
    return table;
  },
  coref(records) {
    const box = el("div");
    for (const r of records) {
      const spans = [];
      r.clusters.forEach((cluster, c) => cluster.forEach(([start, end]) =>
        spans.push({ start, end, cluster: c })));
      box.append(tokensWith(r.tokens, spans, (s, text) => el(
        "span", { class: `mention c${s.cluster % 6}`, "data-cluster": s.cluster,
                  "data-start": s.start, "data-end": s.end }, text, el("sub", {}, s.cluster))));
      if (!r.clusters.length) box.append(el("p", {}, "No coreference clusters."));
    }
    return box;
  },
  squad(records) {
    const box = el("div");
    for (const r of records) {
      const [start, end] = r.best_span;
      box.append(tokensWith(r.passage_tokens, [{ start, end }], (s, text) => el(
        "mark", { class: "answer", "data-start": s.start, "data-end": s.end }, text)));
    }
    return box;
  },
};

function layerWeights(model) {
  const box = el("div", { class: "weights" }, el("h3", {}, "Learned ELMo layer weights"));
  for (const embedder of model.layer_weights) {
    embedder.mixes.forEach((mix, m) => {
      const probabilities = {};
      mix.weights.forEach((w, layer) => { probabilities[`layer ${layer}`] = w; });
      box.append(el("div", { class: "meta" }, `${embedder.embedder} mix ${m}: γ = ${mix.gamma}`),
                 bars(probabilities, null, false));
    });
  }
  return box;
}

function view(model) {
  const section = el("section", { class: "view", id: `view-${model.name}`, hidden: true,
                                  "data-task": model.task, "data-model": model.name });
  const bilm = model.bilm.map((b) => b.name || b.weights).join(", ");
  section.append(el("h2", {}, `${model.name} (${model.task})`),
                 el("div", { class: "meta" },
                    `config ${model.config_sha256.slice(0, 12)} · biLM ${bilm || "none"}`));
  const form = el("form", { class: "predict" });
  const fields = FIELDS[model.task] || [["text", "Text", true]];
  for (const [name, label, multi] of fields) {
    const id = `${model.name}-${name}`;
    const input = multi ? el("textarea", { name, id }) : el("input", { type: "text", name, id });
    input.value = (EXAMPLES[model.task] || {})[name] || "";
    form.append(el("label", { htmlFor: id }, label), input);
  }
  form.append(el("button", { type: "submit", class: "run" }, "Analyse"));
  const output = el("div", { class: "output", "aria-live": "polite" });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const [name] of fields) body[name] = form.elements[name].value;
    output.replaceChildren(el("p", { class: "meta" }, "…"));
    output.removeAttribute("data-done");
    try {
      const response = await fetch(`/predict/${encodeURIComponent(model.name)}`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      const data = await response.json();
      if (!response.ok) throw new Error(data.error || response.statusText);
      const render = RENDER[model.task] || ((r) => el("pre", {}, JSON.stringify(r, null, 2)));
      output.replaceChildren(render(data.results[0]));
    } catch (error) {
      output.replaceChildren(el("p", { class: "error" }, String(error.message || error)));
    }
    output.setAttribute("data-done", "true");
  });
  section.append(form, output, layerWeights(model));
  return section;
}

function show(name) {
  for (const section of document.querySelectorAll(".view")) {
    section.hidden = section.dataset.model !== name;
  }
  for (const button of document.querySelectorAll("nav button")) {
    button.classList.toggle("active", button.dataset.model === name);
  }
}

async function start() {
  const views = document.getElementById("views");
  const nav = document.getElementById("models");
  try {
    const response = await fetch("/models");
    const { models } = await response.json();
    views.replaceChildren();
    for (const model of models) {
      views.append(view(model));
      const button = el("button", { type: "button", "data-model": model.name },
                        `${model.name} · ${model.task}`);
      button.addEventListener("click", () => show(model.name));
      nav.append(button);
    }
    if (models.length) show(models[0].name);
    document.body.setAttribute("data-ready", "true");
  } catch (error) {
    views.replaceChildren(el("p", { class: "error" }, `Cannot list the models: ${error}`));
  }
}

start();
