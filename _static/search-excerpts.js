/* Search excerpts in words, not TeX. Sphinx's search cuts each result's excerpt out of
   the page's HTML, where an equation is still its TeX source ("\(H_t\)"), and may cut
   it in the middle; so before the cut every equation becomes plain text ("H_t").
   Loaded on every page (the search dialog leads to search.html), it only wraps
   Search.htmlToText where Sphinx's searchtools.js defines it. */
(function () {
  "use strict";
  const SYMBOLS = {
    alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", varepsilon: "ε",
    zeta: "ζ", eta: "η", theta: "θ", kappa: "κ", lambda: "λ", mu: "μ", nu: "ν",
    xi: "ξ", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", phi: "φ", varphi: "φ",
    chi: "χ", psi: "ψ", omega: "ω", Gamma: "Γ", Delta: "Δ", Theta: "Θ",
    Lambda: "Λ", Pi: "Π", Sigma: "Σ", Phi: "Φ", Psi: "Ψ", Omega: "Ω", sum: "Σ",
    prod: "Π", int: "∫", partial: "∂", nabla: "∇", infty: "∞", odot: "⊙",
    otimes: "⊗", oplus: "⊕", circ: "∘", cdot: "·", times: "×", top: "ᵀ", in: "∈",
    le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈", sim: "∼",
    to: "→", rightarrow: "→", leftarrow: "←", mapsto: "↦", ldots: "…", cdots: "⋯",
    dots: "…", mid: "|", propto: "∝", sqrt: "√", lvert: "|", rvert: "|", vert: "|",
    langle: "⟨", rangle: "⟩", ell: "ℓ", quad: " ", qquad: " ",
  };
  // commands that only style their argument: the argument stays, the command goes
  const STYLES =
    /^(math[a-z]*|text[a-z]*|operatorname|boldsymbol|bm|hat|tilde|bar|vec)$/;

  /* TeX source of one equation, delimiters included, as readable text. */
  function texToText(tex) {
    return tex
      .replace(/^\s*(\\\(|\\\[|\$\$?)|(\\\)|\\\]|\$\$?)\s*$/g, "")
      .replace(/\\(?:begin|end)\{[^{}]*\}|\\\\|&/g, " ")
      .replace(/\\(?:left|right|big|Big|bigg|Bigg)\b\s*\\?/g, "")
      .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)")
      .replace(/\\mathbb\s*\{?R\}?/g, "ℝ")
      .replace(/\\([A-Za-z]+)/g, (m, name) => SYMBOLS[name] ?? (
        STYLES.test(name) ? "" : name))
      .replace(/\^ᵀ/g, "ᵀ")
      .replace(/\\[,;:! ]/g, " ")
      .replace(/([_^])\{([^{}]*)\}/g,
               (m, op, arg) => op + (arg.length > 1 ? `(${arg})` : arg))
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ")
      .trim();
  }

  function install() {
    if (typeof Search === "undefined" || Search.htmlToText.seqlearnPlain) {
      return;
    }
    const original = Search.htmlToText;
    Search.htmlToText = function (htmlString, anchor) {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll("span.math, div.math").forEach((math) => {
        math.childNodes.forEach((node) => {  // the TeX, not an equation's number
          if (node.nodeType === Node.TEXT_NODE) {
            node.data = ` ${texToText(node.data)} `;
          }
        });
      });
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.htmlToText.seqlearnPlain = true;
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", install);
  } else {
    install();
  }
})();
