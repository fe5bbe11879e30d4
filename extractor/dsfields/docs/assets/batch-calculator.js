/* dsfields batch calculator: train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps x
 * data-parallel ranks, resolved the way DeepSpeed 0.19.8 does it (deepspeed/runtime/config.py:
 * DeepSpeedConfig._set_batch_related_parameters, then _batch_assertion), with DeepSpeed's own messages.
 *
 * Fills every <div class="dsf-batch-calculator"></div> on the page. No dependencies; labels follow
 * <html lang> (zh* -> Chinese, else English). Attaches on page load and on mkdocs-material's instant
 * navigation (document$). resolve() is exported for tests (node: require(this file).resolve).
 */
(function () {
  "use strict";

  var ASSERT_EITHER = "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided";

  /* tbs, micro, gas: integers or null (not given); world: data-parallel ranks. */
  function resolve(tbs, micro, gas, world) {
    var derived = [];
    var floorDiv = function (a, b) { return Math.floor(a / b); };
    if (tbs !== null && micro !== null && gas !== null) {
      // all three given: nothing is derived, only checked
    } else if (tbs !== null && micro !== null) {
      gas = floorDiv(floorDiv(tbs, micro), world);
      derived.push("gas");
    } else if (tbs !== null && gas !== null) {
      micro = floorDiv(floorDiv(tbs, world), gas);
      derived.push("micro");
    } else if (micro !== null && gas !== null) {
      tbs = micro * gas * world;
      derived.push("train_batch_size");
    } else if (tbs !== null) {
      gas = 1;
      micro = floorDiv(tbs, world);
      derived.push("gas", "micro");
    } else if (micro !== null) {
      tbs = micro * world;
      gas = 1;
      derived.push("train_batch_size", "gas");
    } else {
      return { train_batch_size: tbs, micro: micro, gas: gas, derived: derived, error: ASSERT_EITHER };
    }
    var error = null;
    if (!(tbs > 0)) {
      error = "Train batch size: " + tbs + " has to be greater than 0";
    } else if (!(micro > 0)) {
      error = "Micro batch size per gpu: " + micro + " has to be greater than 0";
    } else if (!(gas > 0)) {
      error = "Gradient accumulation steps: " + gas + " has to be greater than 0";
    } else if (tbs !== micro * gas * world) {
      error = "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * " +
        "gradient_acc_step * world_size " + tbs + " != " + micro + " * " + gas + " * " + world;
    }
    return { train_batch_size: tbs, micro: micro, gas: gas, derived: derived, error: error };
  }

  var TEXT = {
    en: {
      title: "Batch size calculator",
      hint: "Leave a batch field empty to let DeepSpeed derive it, as when the key is absent from ds_config.",
      tbs: "train_batch_size",
      micro: "train_micro_batch_size_per_gpu",
      gas: "gradient_accumulation_steps",
      gpus: "GPUs (processes) in the job",
      tp: "tensor-parallel size",
      pp: "pipeline-parallel size",
      sp: "sequence-parallel size",
      ranks: "data-parallel ranks",
      derived: "derived by DeepSpeed",
      given: "given",
      ok: "Consistent: DeepSpeed accepts these values.",
      fails: "DeepSpeed stops with:",
      badSplit: "The GPU count is not a multiple of tensor × pipeline × sequence parallel size.",
      badInput: "Enter positive whole numbers.",
      formula: "train_batch_size = micro × accumulation × data-parallel ranks"
    },
    zh: {
      title: "Batch 大小计算器",
      hint: "某个 batch 字段留空，表示 ds_config 里不写这个键，由 DeepSpeed 推算。",
      tbs: "train_batch_size（全局 batch）",
      micro: "train_micro_batch_size_per_gpu（微批大小）",
      gas: "gradient_accumulation_steps（梯度累积步数）",
      gpus: "作业中的 GPU（进程）数",
      tp: "张量并行大小",
      pp: "流水线并行大小",
      sp: "序列并行大小",
      ranks: "数据并行 rank 数",
      derived: "由 DeepSpeed 推算",
      given: "已给定",
      ok: "一致：DeepSpeed 接受这组取值。",
      fails: "DeepSpeed 会报错退出：",
      badSplit: "GPU 数不是 张量并行 × 流水线并行 × 序列并行 的整数倍。",
      badInput: "请输入正整数。",
      formula: "train_batch_size = 微批大小 × 梯度累积步数 × 数据并行 rank 数"
    }
  };

  function language() {
    var lang = (document.documentElement.getAttribute("lang") || "en").toLowerCase();
    return lang.indexOf("zh") === 0 ? "zh" : "en";
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }

  function parse(value, allowEmpty) {
    var s = String(value).trim();
    if (s === "") { return allowEmpty ? null : NaN; }
    if (!/^\d+$/.test(s)) { return NaN; }
    return parseInt(s, 10);
  }

  function build(root) {
    var t = TEXT[language()];
    var inputs = {};
    var field = function (name, value, group) {
      var id = "dsf-bc-" + name + "-" + Math.random().toString(36).slice(2, 8);
      var input = el("input", { id: id, type: "text", inputmode: "numeric", value: value, "data-name": name });
      inputs[name] = input;
      var state = el("span", { "class": "dsf-bc-state" });
      input._state = state;
      group.appendChild(el("div", { "class": "dsf-bc-row" }, [
        el("label", { "for": id, text: t[name] }), input, state
      ]));
    };
    var batch = el("fieldset", { "class": "dsf-bc-batch" }, [el("legend", { text: t.formula })]);
    var layout = el("fieldset", { "class": "dsf-bc-layout" }, [el("legend", { text: t.ranks })]);
    field("tbs", "", batch);
    field("micro", "4", batch);
    field("gas", "8", batch);
    field("gpus", "8", layout);
    field("tp", "1", layout);
    field("pp", "1", layout);
    field("sp", "1", layout);
    var ranks = el("output", { "class": "dsf-bc-ranks" });
    layout.appendChild(el("div", { "class": "dsf-bc-row" }, [el("span", { text: t.ranks }), ranks]));
    var result = el("div", { "class": "dsf-bc-result", role: "status", "aria-live": "polite" });
    root.appendChild(el("div", { "class": "dsf-bc-title", text: t.title }));
    root.appendChild(el("p", { "class": "dsf-bc-hint", text: t.hint }));
    root.appendChild(batch);
    root.appendChild(layout);
    root.appendChild(result);

    function update() {
      result.textContent = "";
      ["tbs", "micro", "gas"].forEach(function (n) { inputs[n]._state.textContent = ""; });
      var gpus = parse(inputs.gpus.value), tp = parse(inputs.tp.value), pp = parse(inputs.pp.value),
        sp = parse(inputs.sp.value);
      var given = { tbs: parse(inputs.tbs.value, true), micro: parse(inputs.micro.value, true),
        gas: parse(inputs.gas.value, true) };
      var bad = [gpus, tp, pp, sp, given.tbs, given.micro, given.gas].some(function (v) {
        return v !== null && (isNaN(v));
      }) || !(gpus > 0 && tp > 0 && pp > 0 && sp > 0);
      if (bad) {
        ranks.textContent = "–";
        result.className = "dsf-bc-result dsf-bc-error";
        result.textContent = t.badInput;
        return;
      }
      if (gpus % (tp * pp * sp) !== 0) {
        ranks.textContent = "–";
        result.className = "dsf-bc-result dsf-bc-error";
        result.textContent = t.badSplit;
        return;
      }
      var world = gpus / (tp * pp * sp);
      ranks.textContent = String(world);
      var r = resolve(given.tbs, given.micro, given.gas, world);
      var shown = { tbs: r.train_batch_size, micro: r.micro, gas: r.gas };
      var names = { train_batch_size: "tbs", micro: "micro", gas: "gas" };
      r.derived.forEach(function (d) {
        var n = names[d];
        inputs[n]._state.textContent = "→ " + shown[n] + " (" + t.derived + ")";
      });
      if (r.error) {
        result.className = "dsf-bc-result dsf-bc-error";
        result.appendChild(el("span", { text: t.fails + " " }));
        result.appendChild(el("code", { text: "AssertionError: " + r.error }));
      } else {
        result.className = "dsf-bc-result dsf-bc-ok";
        result.appendChild(el("span", { text: t.ok + " " }));
        result.appendChild(el("code", {
          text: r.train_batch_size + " = " + r.micro + " × " + r.gas + " × " + world
        }));
      }
    }

    Object.keys(inputs).forEach(function (n) { inputs[n].addEventListener("input", update); });
    update();
  }

  function init() {
    var roots = document.querySelectorAll(".dsf-batch-calculator");
    for (var i = 0; i < roots.length; i++) {
      if (roots[i].getAttribute("data-dsf-ready") === "1") { continue; }
      roots[i].setAttribute("data-dsf-ready", "1");
      build(roots[i]);
    }
  }

  if (typeof module !== "undefined" && module.exports) {
    module.exports = { resolve: resolve };
  }
  if (typeof document === "undefined") { return; }
  /* global document$ */
  if (typeof document$ !== "undefined" && document$ && typeof document$.subscribe === "function") {
    document$.subscribe(function () { init(); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
