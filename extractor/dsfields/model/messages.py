"""One catalogue of our output sentences in English and Chinese, applied at render time.

Every command builds its English text as before (English output stays byte-identical: :func:`localize`
returns it untouched for ``en``). For ``zh`` the rendered text is rewritten template by template: each
entry's English template, with ``{name}`` placeholders, matches a phrase of one line, and its Chinese
template re-uses the captured values (paths, values, versions, DeepSpeed's own messages) unchanged. So a
print site changes by one call, and engine code (check's findings, diff's details) keeps building English.

DeepSpeed's own words (exception texts, docstrings, removal messages) stay verbatim in both languages;
in Chinese they are preceded by ``原文：`` ("original text") as ``lookup`` marks DeepSpeed's docstring.

Machine formats (json, github, sarif) are not passed through here: their keys, codes and messages stay
English so CI filters keep working (docs/check-output.md).

Only the standard library: every layer may import this module.
"""

from __future__ import annotations

import re
from functools import cache

ORIGINAL = "原文："
"""The mark before DeepSpeed's verbatim words in Chinese text."""

# key -> {"en": template, "zh": template}. Order matters: a longer phrase comes before a shorter one it
# contains. A placeholder at the very end of an English template runs to the end of the line; elsewhere
# it takes as little as lets the rest match.
CATALOGUE: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ diff
    "diff.none": {"en": "no changes from DeepSpeed {old} to {new}",
                  "zh": "DeepSpeed {old} 到 {new} 没有变化"},
    "diff.none_filtered": {"en": "no changes of the kinds asked for from DeepSpeed {old} to {new}",
                           "zh": "DeepSpeed {old} 到 {new} 没有所查类型的变化"},
    "diff.count_one": {"en": "DeepSpeed {old} → {new}: 1 change", "zh": "DeepSpeed {old} → {new}：1 处变化"},
    "diff.count": {"en": "DeepSpeed {old} → {new}: {n} changes", "zh": "DeepSpeed {old} → {new}：{n} 处变化"},
    "diff.inside": {"en": " (and {n} keys inside it)", "zh": "（及其中的 {n} 个键）"},
    "diff.rejected_msg_inside": {
        "en": ": Field was removed and is now rejected: {message} (was not read before) (and {n} keys inside it)",
        "zh": "：字段已移除，现在会被拒绝（此前未被读取；及其中的 {n} 个键）：" + ORIGINAL + "{message}"},
    "diff.rejected_inside": {"en": ": Field was removed and is now rejected: {message} (and {n} keys inside it)",
                             "zh": "：字段已移除，现在会被拒绝（及其中的 {n} 个键）：" + ORIGINAL + "{message}"},
    "diff.rejected_msg": {"en": ": Field was removed and is now rejected: {message} (was not read before)",
                          "zh": "：字段已移除，现在会被拒绝（此前未被读取）：" + ORIGINAL + "{message}"},
    "diff.rejected_with": {"en": ": Field was removed and is now rejected: rejected with its section {section}",
                           "zh": "：字段已移除，现在会被拒绝：随所在配置段 {section} 一起被拒绝"},
    "diff.rejected": {"en": ": Field was removed and is now rejected: {message}",
                      "zh": "：字段已移除，现在会被拒绝：" + ORIGINAL + "{message}"},
    "diff.added_section": {"en": ": Field was added: new section", "zh": "：新增字段：新配置段"},
    "diff.reintroduced": {"en": ": Field was added: reintroduced, was rejected: {message}; default {default}",
                          "zh": "：新增字段：重新引入，此前会被拒绝（" + ORIGINAL + "{message}）；默认值 {default}"},
    "diff.added": {"en": ": Field was added: default ", "zh": "：新增字段：默认值 "},
    "diff.no_longer_read": {"en": ": Field was removed: no longer read; a value here is now ",
                            "zh": "：字段已移除：不再读取；此处的值现在"},
    "diff.no_longer_rejected": {
        "en": ": Field was removed: no longer rejected with a message; a value here is now ",
        "zh": "：字段已移除：不再带消息拒绝；此处的值现在"},
    "diff.renamed_deprecated": {"en": ": Field was renamed: {old} → {new}; the old key is still accepted, deprecated",
                                "zh": "：字段已改名：{old} → {new}；旧键仍被接受，但已弃用"},
    "diff.renamed_same": {"en": ": Field was renamed: {old} → {new} (same pydantic field {name}); the old key is now ",
                          "zh": "：字段已改名：{old} → {new}（同一个 pydantic 字段 {name}）；旧键现在"},
    "diff.effective_same": {"en": ": Default value was changed: effective default same values, now decided by a validator",
                            "zh": "：默认值已改变：实际默认值相同，但现在由校验器决定"},
    "diff.effective": {"en": ": Default value was changed: effective default ", "zh": "：默认值已改变：实际默认值 "},
    "diff.default": {"en": ": Default value was changed: ", "zh": "：默认值已改变："},
    "diff.json_types": {"en": ": Type was changed: JSON types ", "zh": "：类型已改变：JSON 类型 "},
    "diff.type": {"en": ": Type was changed: ", "zh": "：类型已改变："},
    "diff.constraint": {"en": ": Constraint was changed: ", "zh": "：约束已改变："},
    "diff.deprecation_changed": {"en": ": Field was deprecated: deprecation changed: ",
                                 "zh": "：字段已弃用：弃用信息改变："},
    "diff.deprecated_use": {"en": ": Field was deprecated: use {new} instead ({message})",
                            "zh": "：字段已弃用：请改用 {new}（" + ORIGINAL + "{message}）"},
    "diff.deprecated_use_only": {"en": ": Field was deprecated: use {new} instead",
                                 "zh": "：字段已弃用：请改用 {new}"},
    "diff.deprecated_only": {"en": ": Field was deprecated: deprecated", "zh": "：字段已弃用"},
    "diff.deprecated": {"en": ": Field was deprecated: {message}", "zh": "：字段已弃用：" + ORIGINAL + "{message}"},
    "diff.undeprecated": {"en": ": Field was un-deprecated: no longer deprecated", "zh": "：字段不再弃用"},
    "diff.description": {"en": ": Description was changed: description text changed",
                         "zh": "：说明已改变：DeepSpeed 源码中的说明文字有改动"},
    "diff.strict_model": {
        "en": " (dict reader → pydantic model; a typo that was silently ignored now raises)",
        "zh": "（dict 读取 → pydantic 模型；以前被静默忽略的拼写错误现在会报错）"},
    "diff.strict_raises": {"en": " (a typo that was silently ignored now raises)",
                           "zh": "（以前被静默忽略的拼写错误现在会报错）"},
    "diff.strict_lax": {"en": " (a typo is no longer reported)", "zh": "（拼写错误不再报告）"},
    "diff.strictness": {"en": ": Unknown-key handling of the section was changed: unknown keys: ",
                        "zh": "：配置段对未知键的处理已改变：未知键："},
    "diff.stage": {"en": "ZeRO stage {n}: ", "zh": "ZeRO 阶段 {n}："},
    "diff.fate_section": {"en": "ignored (its section is not read either)", "zh": "被忽略（其所在配置段也不再读取）"},
    "diff.fate_rejected": {"en": "rejected as an unknown key", "zh": "作为未知键被拒绝"},
    "diff.fate_passed": {"en": "passed on but unused", "zh": "被传递但不使用"},
    "diff.fate_ignored": {"en": "silently ignored", "zh": "被静默忽略"},
    "diff.top_level": {"en": "(top level)", "zh": "（顶层）"},
    # ------------------------------------------------------------ resolve (text); "$" ends a template at the end of a line
    "resolve.head": {"en": ": as DeepSpeed {version} reads it (* = written in the file)",
                     "zh": "：DeepSpeed {version} 读取到的值（* = 文件中写明的键）"},
    "resolve.top": {"en": "[top level]", "zh": "[顶层]"},
    "resolve.set_later": {"en": "  (set later)  [", "zh": "  （稍后填入）  ["},
    "resolve.removed": {"en": "[removed] ({message})$", "zh": "[已移除] (" + ORIGINAL + "{message})"},
    "resolve.rejects": {"en": "(DeepSpeed rejects it: {message})$", "zh": "(DeepSpeed 拒绝该值：" + ORIGINAL + "{message})"},
    "resolve.kwarg": {"en": "(passed to the class as a keyword argument)", "zh": "(作为关键字参数传给该类)"},
    "resolve.absent_none": {"en": "(absent: DeepSpeed keeps None for the section)",
                            "zh": "(未写：DeepSpeed 将该配置段保留为 None)"},
    "resolve.sentinel": {"en": "(DeepSpeed keeps a private marker meaning \"not given\")",
                         "zh": "(DeepSpeed 保留一个表示“未给出”的内部标记)"},
    "resolve.absent_value": {"en": "(what the reader returns when the key is absent)", "zh": "(键缺失时读取器返回的值)"},
    "resolve.python_value": {"en": "(a Python value, not JSON)", "zh": "(Python 值，不是 JSON)"},
    "resolve.builtin": {"en": "(DeepSpeed's built-in object)", "zh": "(DeepSpeed 内置的对象)"},
    "resolve.world": {"en": "(at world size {n})", "zh": "(world size 为 {n} 时)"},
    "resolve.lower": {"en": "(DeepSpeed lower-cases the name)", "zh": "(DeepSpeed 会把名称转为小写)"},
    "resolve.stage": {"en": "(zero_optimization.stage is {n})", "zh": "(zero_optimization.stage 为 {n})"},
    "resolve.validator": {"en": "(decided by a validator", "zh": "(由校验器决定"},
    "resolve.not_read": {"en": "(not a key DeepSpeed reads)", "zh": "(DeepSpeed 不读取这个键)"},
    "resolve.unknown": {"en": "(DeepSpeed raises on it (unknown key))", "zh": "(DeepSpeed 会因此报错（未知键）)"},
    "resolve.kept": {"en": "(kept, never read)", "zh": "(被保留，但从不读取)"},
    "resolve.needs_batch": {"en": "(DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu)",
                            "zh": "(DeepSpeed 需要 train_batch_size 或 train_micro_batch_size_per_gpu)"},
    "resolve.not_number_derive": {"en": "(cannot be derived from a value that is not a number)",
                                  "zh": "(无法从非数字的值推导)"},
    "resolve.hf_fills": {"en": "(from the values the HF Trainer fills)", "zh": "(由 HF Trainer 填入的值推导)"},
    "resolve.filled_hf": {"en": "(filled by the HF Trainer)", "zh": "(由 HF Trainer 填入)"},
    "resolve.not_number": {"en": "(not a number: DeepSpeed fails on the batch arithmetic)",
                           "zh": "(不是数字：DeepSpeed 的批大小计算会失败)"},
    "resolve.sets_it": {"en": " is {value}: DeepSpeed sets it)", "zh": " 为 {value}：DeepSpeed 会设置它)"},
    "resolve.carried": {"en": "(carried to {path})", "zh": "(转给 {path})"},
    "resolve.from": {"en": "(from {path})", "zh": "(来自 {path})"},
    "resolve.ignores_use": {"en": "(deprecated; DeepSpeed ignores the value (use {new}))",
                            "zh": "(已弃用；DeepSpeed 忽略该值（请改用 {new}）)"},
    "resolve.ignores": {"en": "(deprecated; DeepSpeed ignores the value)", "zh": "(已弃用；DeepSpeed 忽略该值)"},
    "resolve.bf16": {"en": "(\"bf16\" is present: DeepSpeed reads only that)", "zh": "(已有 \"bf16\"：DeepSpeed 只读取它)"},
    "resolve.hands_on": {"en": "(DeepSpeed hands the whole object on)", "zh": "(DeepSpeed 将整个对象原样传递)"},
    "resolve.drops_auto": {"en": "(DeepSpeed drops \"auto\"", "zh": "(DeepSpeed 丢弃 \"auto\""},
    "resolve.stores_auto": {"en": "(DeepSpeed stores the string \"auto\")", "zh": "(DeepSpeed 按字符串 \"auto\" 保存)"},
    "resolve.computed": {"en": " (computed by the Trainer))", "zh": "（由 Trainer 计算）)"},
    "resolve.not_ta": {"en": " (not a TrainingArguments field))", "zh": "（不是 TrainingArguments 字段）)"},
    "resolve.model_config": {"en": " (the model's config))", "zh": "（取自模型配置）)"},
    "resolve.s.written": {"en": "  [written]", "zh": "  [写明]"},
    "resolve.s.effective": {"en": "  [effective default]", "zh": "  [实际默认值]"},
    "resolve.s.default": {"en": "  [default]", "zh": "  [默认值]"},
    "resolve.s.derived": {"en": "  [derived]", "zh": "  [推导]"},
    "resolve.s.auto_default": {"en": "  [auto → default]", "zh": "  [auto → 默认值]"},
    "resolve.s.auto_kept": {"en": "  [auto → kept]", "zh": "  [auto → 原样保留]"},
    "resolve.s.auto_hf": {"en": "  [auto → HF Trainer]", "zh": "  [auto → HF Trainer 填入]"},
    "resolve.s.deprecated": {"en": "  [deprecated → replacement]", "zh": "  [已弃用 → 替代键]"},
    "resolve.s.passed": {"en": "  [passed on whole]", "zh": "  [整体传递]"},
    "resolve.s.ignored": {"en": "  [ignored]", "zh": "  [忽略]"},
    "resolve.s.removed": {"en": "  [removed]", "zh": "  [已移除]"},
    "resolve.s.not_given": {"en": "  [not given]", "zh": "  [未给出]"},
}

DIFF_KINDS_ZH = {
    "Field was added": "新增字段", "Field was removed and is now rejected": "字段已移除，现在会被拒绝",
    "Field was removed": "字段已移除", "Field was renamed": "字段已改名", "Default value was changed": "默认值已改变",
    "Type was changed": "类型已改变", "Constraint was changed": "约束已改变", "Field was deprecated": "字段已弃用",
    "Field was un-deprecated": "字段不再弃用", "Unknown-key handling of the section was changed": "配置段对未知键的处理已改变",
    "Description was changed": "说明已改变",
}
"""diff's change kinds (``ChangeKind`` values) in Chinese."""


def _markdown_forms() -> dict[str, dict[str, str]]:
    """diff's Markdown lines say ``**Kind** — detail`` where text says ``: Kind: detail``: the same entries."""
    out: dict[str, dict[str, str]] = {}
    for key, entry in CATALOGUE.items():
        kind, colon, rest = entry["en"].removeprefix(": ").partition(": ")
        if not (key.startswith("diff.") and entry["en"].startswith(": ") and kind in DIFF_KINDS_ZH):
            continue
        zh_kind = DIFF_KINDS_ZH[kind]
        zh_rest = entry["zh"].removeprefix("：" + zh_kind).removeprefix("：")
        out[f"diff.md.{key}"] = {"en": f"**{kind}**" + (f" — {rest}" if colon else ""),
                                 "zh": f"**{zh_kind}**" + (f" — {zh_rest}" if colon else "")}
    for kind, zh_kind in DIFF_KINDS_ZH.items():
        out[f"diff.md.kind.{kind}"] = {"en": f"**{kind}**", "zh": f"**{zh_kind}**"}
    return out


CATALOGUE |= _markdown_forms()


def _pattern(template: str) -> re.Pattern[str]:
    at_end = template.endswith("$")  # the phrase ends its line: its last placeholder takes all it can
    parts = re.split(r"\{(\w+)\}", template.removesuffix("$"))
    out: list[str] = []
    seen: set[str] = set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part in seen:
            out.append(f"(?P={part})")
        else:
            seen.add(part)
            last = i == len(parts) - 2 and (parts[-1] == "" or at_end)
            out.append(f"(?P<{part}>[^\\n]*)" if last else f"(?P<{part}>[^\\n]+?)")
    return re.compile("".join(out) + ("$" if at_end else ""), re.MULTILINE)


@cache
def _compiled(prefix: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((_pattern(entry["en"]), entry["zh"]) for key, entry in CATALOGUE.items()
                 if key.startswith(prefix) and entry["en"] != entry["zh"])


def localize(text: str, lang: str, *groups: str) -> str:
    """``text`` in ``lang``: unchanged for English; for Chinese every phrase of the catalogue entries whose
    key starts with one of ``groups`` (``"diff."``) rewritten, values kept as they are."""
    if lang != "zh" or not text:
        return text
    for group in groups:
        for pattern, zh in _compiled(group):
            text = pattern.sub(lambda match, zh=zh: zh.format(**match.groupdict()), text)
    return text


def say(key: str, lang: str, **values: object) -> str:
    """One catalogue entry in ``lang``, its placeholders filled."""
    entry = CATALOGUE[key]
    return (entry["zh"] if lang == "zh" else entry["en"]).format(**values)


def english_templates(*groups: str) -> list[str]:
    """The fixed English words of each entry (placeholders removed): what Chinese output must not contain."""
    out: list[str] = []
    for key, entry in CATALOGUE.items():
        if key.startswith(groups) and entry["en"] != entry["zh"]:
            out += [part.strip(" :;()") for part in re.split(r"\{\w+\}", entry["en"].removesuffix("$")) if len(part.strip()) > 8]
    return out
