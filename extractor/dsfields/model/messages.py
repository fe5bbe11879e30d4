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
    "diff.none": {"en": "no changes from DeepSpeed {old} to {new}", "zh": "DeepSpeed {old} 到 {new} 没有变化"},
    "diff.none_filtered": {
        "en": "no changes of the kinds asked for from DeepSpeed {old} to {new}",
        "zh": "DeepSpeed {old} 到 {new} 没有所查类型的变化"},
    "diff.count_one": {"en": "DeepSpeed {old} → {new}: 1 change", "zh": "DeepSpeed {old} → {new}：1 处变化"},
    "diff.count": {"en": "DeepSpeed {old} → {new}: {n} changes", "zh": "DeepSpeed {old} → {new}：{n} 处变化"},
    "diff.rejected_msg_inside": {
        "en": ": Field was removed and is now rejected: {message} (was not read before) (and {n} keys inside it)",
        "zh": "：字段已移除，现在会被拒绝（此前未被读取；及其中的 {n} 个键）：" + ORIGINAL + "{message}"},
    "diff.rejected_inside": {
        "en": ": Field was removed and is now rejected: {message} (and {n} keys inside it)",
        "zh": "：字段已移除，现在会被拒绝（及其中的 {n} 个键）：" + ORIGINAL + "{message}"},
    "diff.rejected_msg": {
        "en": ": Field was removed and is now rejected: {message} (was not read before)",
        "zh": "：字段已移除，现在会被拒绝（此前未被读取）：" + ORIGINAL + "{message}"},
    "diff.rejected_with": {
        "en": ": Field was removed and is now rejected: rejected with its section {section}",
        "zh": "：字段已移除，现在会被拒绝：随所在配置段 {section} 一起被拒绝"},
    "diff.rejected": {
        "en": ": Field was removed and is now rejected: {message}",
        "zh": "：字段已移除，现在会被拒绝：" + ORIGINAL + "{message}"},
    "diff.inside": {"en": " (and {n} keys inside it)", "zh": "（及其中的 {n} 个键）"},
    "diff.added_section": {"en": ": Field was added: new section", "zh": "：新增字段：新配置段"},
    "diff.reintroduced": {
        "en": ": Field was added: reintroduced, was rejected: {message}; default {default}",
        "zh": "：新增字段：重新引入，此前会被拒绝（" + ORIGINAL + "{message}）；默认值 {default}"},
    "diff.added": {"en": ": Field was added: default ", "zh": "：新增字段：默认值 "},
    "diff.no_longer_read": {
        "en": ": Field was removed: no longer read; a value here is now ",
        "zh": "：字段已移除：不再读取；此处的值现在"},
    "diff.no_longer_rejected": {
        "en": ": Field was removed: no longer rejected with a message; a value here is now ",
        "zh": "：字段已移除：不再带消息拒绝；此处的值现在"},
    "diff.renamed_deprecated": {
        "en": ": Field was renamed: {old} → {new}; the old key is still accepted, deprecated",
        "zh": "：字段已改名：{old} → {new}；旧键仍被接受，但已弃用"},
    "diff.renamed_same": {
        "en": ": Field was renamed: {old} → {new} (same pydantic field {name}); the old key is now ",
        "zh": "：字段已改名：{old} → {new}（同一个 pydantic 字段 {name}）；旧键现在"},
    "diff.effective_same": {
        "en": ": Default value was changed: effective default same values, now decided by a validator",
        "zh": "：默认值已改变：实际默认值相同，但现在由校验器决定"},
    "diff.effective": {"en": ": Default value was changed: effective default ", "zh": "：默认值已改变：实际默认值 "},
    "diff.default": {"en": ": Default value was changed: ", "zh": "：默认值已改变："},
    "diff.json_types": {"en": ": Type was changed: JSON types ", "zh": "：类型已改变：JSON 类型 "},
    "diff.type": {"en": ": Type was changed: ", "zh": "：类型已改变："},
    "diff.constraint": {"en": ": Constraint was changed: ", "zh": "：约束已改变："},
    "diff.deprecation_changed": {
        "en": ": Field was deprecated: deprecation changed: ",
        "zh": "：字段已弃用：弃用信息改变："},
    "diff.deprecated_use": {
        "en": ": Field was deprecated: use {new} instead ({message})",
        "zh": "：字段已弃用：请改用 {new}（" + ORIGINAL + "{message}）"},
    "diff.deprecated_use_only": {"en": ": Field was deprecated: use {new} instead", "zh": "：字段已弃用：请改用 {new}"},
    "diff.deprecated_only": {"en": ": Field was deprecated: deprecated", "zh": "：字段已弃用"},
    "diff.deprecated": {"en": ": Field was deprecated: {message}", "zh": "：字段已弃用：" + ORIGINAL + "{message}"},
    "diff.undeprecated": {"en": ": Field was un-deprecated: no longer deprecated", "zh": "：字段不再弃用"},
    "diff.description": {
        "en": ": Description was changed: description text changed",
        "zh": "：说明已改变：DeepSpeed 源码中的说明文字有改动"},
    "diff.strict_model": {
        "en": " (dict reader → pydantic model; a typo that was silently ignored now raises)",
        "zh": "（dict 读取 → pydantic 模型；以前被静默忽略的拼写错误现在会报错）"},
    "diff.strict_raises": {
        "en": " (a typo that was silently ignored now raises)",
        "zh": "（以前被静默忽略的拼写错误现在会报错）"},
    "diff.strict_lax": {"en": " (a typo is no longer reported)", "zh": "（拼写错误不再报告）"},
    "diff.strictness": {
        "en": ": Unknown-key handling of the section was changed: unknown keys: ",
        "zh": "：配置段对未知键的处理已改变：未知键："},
    "diff.stage": {"en": "ZeRO stage {n}: ", "zh": "ZeRO 阶段 {n}："},
    "diff.fate_section": {"en": "ignored (its section is not read either)", "zh": "被忽略（其所在配置段也不再读取）"},
    "diff.fate_rejected": {"en": "rejected as an unknown key", "zh": "作为未知键被拒绝"},
    "diff.fate_passed": {"en": "passed on but unused", "zh": "被传递但不使用"},
    "diff.fate_ignored": {"en": "silently ignored", "zh": "被静默忽略"},
    "diff.top_level": {"en": "(top level)", "zh": "（顶层）"},
    # ------------------------------------------------------------ resolve (text)
    # a template ending in "$" ends at the end of its line
    "resolve.head": {
        "en": ": as DeepSpeed {version} reads it (* = written in the file)",
        "zh": "：DeepSpeed {version} 读取到的值（* = 文件中写明的键）"},
    "resolve.top": {"en": "[top level]", "zh": "[顶层]"},
    "resolve.set_later": {"en": "  (set later)  [", "zh": "  （稍后填入）  ["},
    "resolve.removed": {"en": "[removed] ({message})$", "zh": "[已移除] (" + ORIGINAL + "{message})"},
    "resolve.rejects": {
        "en": "(DeepSpeed rejects it: {message})$",
        "zh": "(DeepSpeed 拒绝该值：" + ORIGINAL + "{message})"},
    "resolve.kwarg": {"en": "(passed to the class as a keyword argument)", "zh": "(作为关键字参数传给该类)"},
    "resolve.absent_none": {
        "en": "(absent: DeepSpeed keeps None for the section)",
        "zh": "(未写：DeepSpeed 将该配置段保留为 None)"},
    "resolve.sentinel": {
        "en": "(DeepSpeed keeps a private marker meaning \"not given\")",
        "zh": "(DeepSpeed 保留一个表示“未给出”的内部标记)"},
    "resolve.absent_value": {
        "en": "(what the reader returns when the key is absent)",
        "zh": "(键缺失时读取器返回的值)"},
    "resolve.python_value": {"en": "(a Python value, not JSON)", "zh": "(Python 值，不是 JSON)"},
    "resolve.builtin": {"en": "(DeepSpeed's built-in object)", "zh": "(DeepSpeed 内置的对象)"},
    "resolve.world": {"en": "(at world size {n})", "zh": "(world size 为 {n} 时)"},
    "resolve.lower": {"en": "(DeepSpeed lower-cases the name)", "zh": "(DeepSpeed 会把名称转为小写)"},
    "resolve.stage": {"en": "(zero_optimization.stage is {n})", "zh": "(zero_optimization.stage 为 {n})"},
    "resolve.validator": {"en": "(decided by a validator", "zh": "(由校验器决定"},
    "resolve.not_read": {"en": "(not a key DeepSpeed reads)", "zh": "(DeepSpeed 不读取这个键)"},
    "resolve.unknown": {"en": "(DeepSpeed raises on it (unknown key))", "zh": "(DeepSpeed 会因此报错（未知键）)"},
    "resolve.kept": {"en": "(kept, never read)", "zh": "(被保留，但从不读取)"},
    "resolve.needs_batch": {
        "en": "(DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu)",
        "zh": "(DeepSpeed 需要 train_batch_size 或 train_micro_batch_size_per_gpu)"},
    "resolve.not_number_derive": {
        "en": "(cannot be derived from a value that is not a number)",
        "zh": "(无法从非数字的值推导)"},
    "resolve.hf_fills": {"en": "(from the values the HF Trainer fills)", "zh": "(由 HF Trainer 填入的值推导)"},
    "resolve.filled_hf": {"en": "(filled by the HF Trainer)", "zh": "(由 HF Trainer 填入)"},
    "resolve.not_number": {
        "en": "(not a number: DeepSpeed fails on the batch arithmetic)",
        "zh": "(不是数字：DeepSpeed 的批大小计算会失败)"},
    "resolve.sets_it": {"en": " is {value}: DeepSpeed sets it)", "zh": " 为 {value}：DeepSpeed 会设置它)"},
    "resolve.carried": {"en": "(carried to {path})", "zh": "(转给 {path})"},
    "resolve.from": {"en": "(from {path})", "zh": "(来自 {path})"},
    "resolve.ignores_use": {
        "en": "(deprecated; DeepSpeed ignores the value (use {new}))",
        "zh": "(已弃用；DeepSpeed 忽略该值（请改用 {new}）)"},
    "resolve.ignores": {"en": "(deprecated; DeepSpeed ignores the value)", "zh": "(已弃用；DeepSpeed 忽略该值)"},
    "resolve.bf16": {
        "en": "(\"bf16\" is present: DeepSpeed reads only that)",
        "zh": "(已有 \"bf16\"：DeepSpeed 只读取它)"},
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
    # ------------------------------------------------------------ migrate (its report lines, stderr or stdout)
    "migrate.from": {
        "en": ": from DeepSpeed {old} (--from {given}) to {new}$",
        "zh": "：从 DeepSpeed {old}（--from {given}）迁移到 {new}"},
    "migrate.guessed": {
        "en": ": from DeepSpeed {old} (guessed {how}) to {new}$",
        "zh": "：从 DeepSpeed {old}（推断为 {how}）迁移到 {new}"},
    "migrate.nothing": {"en": ": nothing to migrate for DeepSpeed {new}$", "zh": "：迁移到 DeepSpeed {new} 无需改动"},
    "migrate.value": {"en": ": value changes: ", "zh": "：值的变化："},
    "migrate.lost": {"en": ": cannot be carried: ", "zh": "：无法迁移："},
    "migrate.attention": {"en": ": needs attention: ", "zh": "：需要留意："},
    "migrate.no_feature": {
        "en": ": DeepSpeed {old} used it; DeepSpeed {new} has no such feature, so it cannot be carried (DeepSpeed:"
              " {message})$",
        "zh": "：DeepSpeed {old} 使用它；DeepSpeed {new} 没有这一功能，因此无法迁移（" + ORIGINAL + "{message}）"},
    "migrate.no_longer_has": {
        "en": ": DeepSpeed {new} no longer has it; what it set in DeepSpeed {old} cannot be carried$",
        "zh": "：DeepSpeed {new} 不再有它；它在 DeepSpeed {old} 中的设置无法迁移"},
    "migrate.optimizer_gone": {
        "en": ": DeepSpeed {old} has this optimizer, DeepSpeed {new} does not; it cannot be carried: choose one "
              "DeepSpeed {v} has (",
        "zh": "：DeepSpeed {old} 有这个优化器，DeepSpeed {new} 没有；无法迁移："
              "请从 DeepSpeed {v} 自带的优化器中选一个（"},
    "migrate.own_optimizer": {"en": ") or pass your own from code", "zh": "），或在代码中传入你自己的优化器"},
    "migrate.used": {"en": ": DeepSpeed {old} used {value} (", "zh": "：DeepSpeed {old} 使用 {value}（"},
    "migrate.would_use": {
        "en": "; DeepSpeed {new} would use {value}; {kept} written to keep it",
        "zh": "；DeepSpeed {new} 会使用 {value}；已写入 {kept} 以保持原行为"},
    "migrate.uses": {"en": "); DeepSpeed {new} uses {value} (", "zh": "）；DeepSpeed {new} 使用 {value}（"},
    "migrate.written": {"en": "); written in the file$", "zh": "）；文件中写明"},
    "migrate.ignores": {
        "en": ": DeepSpeed {v} ignores it; left alone (--drop-ignored deletes it)$",
        "zh": "：DeepSpeed {v} 忽略它；保持不动（--drop-ignored 会删除它）"},
    "migrate.passed_string": {
        "en": ": {value} is passed to {classes} as the string {same}; left alone$",
        "zh": "：{value} 会作为字符串 {same} 传给 {classes}；保持不动"},
    "migrate.alone_rejects": {
        "en": ": DeepSpeed alone rejects {value} here ({message}); left alone$",
        "zh": "：单用 DeepSpeed（不经 HF Trainer）时此处的 {value} 会被拒绝（" + ORIGINAL + "{message}）；保持不动"},
    "migrate.not_key_left": {
        "en": ": not a key of DeepSpeed {v}, which rejects it here; left alone$",
        "zh": "：不是 DeepSpeed {v} 的键，该版本在此处会拒绝它；保持不动"},
    "migrate.not_key_deleted": {
        "en": ": read by DeepSpeed {old}, not a key of DeepSpeed {new}, which rejects it here; deleted$",
        "zh": "：DeepSpeed {old} 读取它，但它不是 DeepSpeed {new} 的键，该版本在此处会拒绝它；已删除"},
    "migrate.section_strict": {
        "en": ": DeepSpeed {old} ignored it (its {section} section was read key by key); DeepSpeed {new} rejects"
              " unknown keys there; deleted$",
        "zh": "：DeepSpeed {old} 忽略它（其 {section} 配置段逐键读取）；DeepSpeed {new} 在此拒绝未知键；已删除"},
    "migrate.removed_off": {
        "en": ": removed in DeepSpeed {v}, and off in the file; deleted (DeepSpeed: {message})$",
        "zh": "：DeepSpeed {v} 已移除，且文件中是关闭的；已删除（" + ORIGINAL + "{message}）"},
    "migrate.removed": {
        "en": ": removed in DeepSpeed {v}, deleted (DeepSpeed: {message})$",
        "zh": "：DeepSpeed {v} 已移除；已删除（" + ORIGINAL + "{message}）"},
    "migrate.renamed_ds": {"en": " (DeepSpeed {v}: {message}; ", "zh": "（DeepSpeed {v} " + ORIGINAL + "{message}；"},
    "migrate.legacy_bf16": {
        "en": " (the legacy spelling; bf16 is read, and bfloat16 only when bf16 is absent; ",
        "zh": "（旧拼写；DeepSpeed 读取 bf16，只有 bf16 缺失时才读取 bfloat16；"},
    "migrate.src.0": {"en": "（default, ", "zh": "（默认值，"},
    "migrate.srcend.0": {"en": "（default）", "zh": "（默认值）"},
    "migrate.src.1": {"en": "（written, ", "zh": "（写明，"},
    "migrate.srcend.1": {"en": "（written）", "zh": "（写明）"},
    "migrate.src.2": {"en": "（auto → kept, ", "zh": "（auto → 原样保留，"},
    "migrate.srcend.2": {"en": "（auto → kept）", "zh": "（auto → 原样保留）"},
    "migrate.src.3": {"en": "（auto → default, ", "zh": "（auto → 默认值，"},
    "migrate.srcend.3": {"en": "（auto → default）", "zh": "（auto → 默认值）"},
    "migrate.src.4": {"en": "（effective default, ", "zh": "（实际默认值，"},
    "migrate.srcend.4": {"en": "（effective default）", "zh": "（实际默认值）"},
    "migrate.src.5": {"en": "（derived, ", "zh": "（推导，"},
    "migrate.srcend.5": {"en": "（derived）", "zh": "（推导）"},
    "migrate.src.6": {"en": "（auto → HF Trainer, ", "zh": "（auto → HF Trainer 填入，"},
    "migrate.srcend.6": {"en": "（auto → HF Trainer）", "zh": "（auto → HF Trainer 填入）"},
    "migrate.src.7": {"en": "（deprecated → replacement, ", "zh": "（已弃用 → 替代键，"},
    "migrate.srcend.7": {"en": "（deprecated → replacement）", "zh": "（已弃用 → 替代键）"},
    "migrate.left_alone": {"en": "; left alone$", "zh": "；保持不动"},
    "migrate.renamed": {"en": " (deprecated, renamed)", "zh": "（已弃用，已改名）"},
    "migrate.derived": {
        "en": " (deprecated; the value DeepSpeed derives from it)",
        "zh": "（已弃用；取 DeepSpeed 由它推导出的值）"},
    "migrate.false_means": {
        "en": ": deprecated; false means no {target} (DeepSpeed sets it to null, the default); deleted",
        "zh": "：已弃用；false 表示没有 {target}（DeepSpeed 将其设为默认值 null）；已删除"},
    "migrate.from_path": {"en": " (from {path})$", "zh": "（来自 {path}）"},
    # ------------------------------------------------------------ error lines (cli.py's one line on stderr)
    "error.cannot_tell": {
        "en": "cannot tell which DeepSpeed release the file was written for (",
        "zh": "无法判断该文件是为哪个 DeepSpeed 版本写的（"},
    "error.read_from_on": {"en": " is read from {v} on", "zh": " 从 {v} 起被读取"},
    "error.read_up_to": {"en": " is read up to {v}", "zh": " 最晚读取到 {v}"},
    "error.written_for": {
        "en": ": written for a release in {low} … {high}",
        "zh": "：文件适用于 {low} … {high} 之间的版本"},
    "error.defaults_between": {
        "en": ", and DeepSpeed changed defaults this file relies on in between (",
        "zh": "，而 DeepSpeed 在此期间改变了该文件依赖的默认值（"},
    "error.every_key": {
        "en": "every key the file has is read by every snapshotted release ({span}), so its keys do not tell the"
              " release",
        "zh": "文件中的每个键在所有已快照的版本（{span}）中都会被读取，无法据此判断版本"},
    "error.guessed": {"en": "guessed {v} (", "zh": "推断为 {v}（"},
    "error.no_default_changed": {"en": "; no default this file relies on changed in between)",
                                 "zh": "；该文件依赖的默认值在此期间都没有改变）"},
    "error.give_from": {"en": "); give it with --from U", "zh": "）；请用 --from U 指定"},
    "error.top_array": {"en": ": the top level is an array, not an object", "zh": "：顶层是数组，不是对象"},
    "error.top_not_object": {"en": ": the top level is {what}, not an object", "zh": "：顶层是 {what}，不是对象"},
    "error.no_snapshot": {
        "en": "no snapshot for DeepSpeed {v} (available: ",
        "zh": "没有 DeepSpeed {v} 的快照（可用："},
    "error.releases": {"en": "{n} releases, ", "zh": "{n} 个版本，"},
    "error.newest": {"en": "; newest: ", "zh": "；最新："},
    "error.or_installed": {"en": ", or installed)", "zh": "，或 installed）"},
    "error.hf_cannot": {"en": ": the HF Trainer cannot load it (", "zh": "：HF Trainer 无法加载它（"},
    "error.check_hf": {"en": "); dsfields check --hf says more", "zh": "）；dsfields check --hf 会给出更多信息"},
    "error.not_strict": {
        "en": "not strict JSON, and the HF Trainer reads the file with json.load: {message}$",
        "zh": "不是严格的 JSON，而 HF Trainer 用 json.load 读取文件：" + ORIGINAL + "{message}"},
    "error.repeated": {
        "en": ": line {n}: {path} is repeated in one object, and DeepSpeed refuses the file ",
        "zh": "：第 {n} 行：{path} 在同一个对象中重复出现，DeepSpeed 会拒绝该文件 "},
    "error.no_such_file": {"en": ": no such file", "zh": "：文件不存在"},
    "error.cannot_read": {"en": ": cannot read (", "zh": "：无法读取（"},
    "error.not_json": {"en": ": not JSON (", "zh": "：不是 JSON（"},
    "error.needs_extra": {"en": "needs {package}, which cannot be imported", "zh": "需要 {package}，但无法导入"},
    "error.install": {"en": "; install it with ", "zh": "；请用以下命令安装："},
    "error.world": {"en": "--world-size must be at least 1", "zh": "--world-size 至少为 1"},
    "error.only": {
        "en": "--only needs a key or section path, e.g. --only zero_optimization",
        "zh": "--only 需要一个键或配置段路径，例如 --only zero_optimization"},
    "error.only_unknown": {
        "en": ": no key or section of DeepSpeed {v} (lookup finds paths)",
        "zh": "：不是 DeepSpeed {v} 的键或配置段（lookup 可以查找路径）"},
    "error.both_out": {"en": "give -o OUT or --in-place, not both", "zh": "-o OUT 与 --in-place 只能给一个"},
    "error.largest_layer": {
        "en": "ZeRO stage 3 needs --largest-layer-params N (or --hidden-size H for 4·H²)",
        "zh": "ZeRO 阶段 3 需要 --largest-layer-params N（或用 --hidden-size H 按 4·H² 计算）"},
    "error.lang": {"en": "dsfields speaks ", "zh": "dsfields 支持的语言："},
    "error.unknown_kind": {"en": "unknown change kind {kind} (accepted: ", "zh": "未知的变化类型 {kind}（可用："},
    "error.params_required": {
        "en": "--params N is required (the model's total parameter count, e.g. 7e9)",
        "zh": "需要 --params N（模型的总参数量，例如 7e9）"},
    "error.not_number_ds": {"en": ": not a number DeepSpeed can use", "zh": "：不是 DeepSpeed 能用的数字"},
    "error.negative": {"en": ": a negative size", "zh": "：大小为负数"},
    "error.stages": {"en": ": DeepSpeed has stages 0 to 3", "zh": "：DeepSpeed 只有阶段 0 到 3"},
    "error.nan": {"en": ": not a number (e.g. 7e9, 7B, 350M)", "zh": "：不是数字（例如 7e9、7B、350M）"},
    "error.finite": {"en": ": not a finite number", "zh": "：不是有限的数字"},
    "error.positive": {"en": ": must be more than 0", "zh": "：必须大于 0"},
    "error.whole": {"en": ": not a whole number", "zh": "：不是整数"},
    "error.not_object": {"en": ": not a JSON object", "zh": "：不是 JSON 对象"},
    "error.file_name": {"en": ": not a usable file name (", "zh": "：不是可用的文件名（"},
    "error.only_regular": {"en": "; only regular files are read", "zh": "；只读取普通文件"},
    "error.utf8": {"en": ": not UTF-8 text (byte {n})", "zh": "：不是 UTF-8 文本（第 {n} 字节）"},
    "error.malformed": {"en": ": malformed JSON: {message}$", "zh": "：JSON 格式错误：" + ORIGINAL + "{message}"},
    "error.re_extract": {"en": "; re-extract it", "zh": "；请重新提取"},
    "error.interrupted": {"en": "dsfields: interrupted", "zh": "dsfields：已中断"},
    # argparse's own refusals (usage lines stay as argparse prints them)
    "error.argparse.required": {"en": "the following arguments are required: ", "zh": "缺少以下参数："},
    "error.argparse.unrecognized": {"en": "unrecognized arguments: ", "zh": "无法识别的参数："},
    "error.argparse.choice": {
        "en": "argument {arg}: invalid choice: {value} (choose from {choices})$",
        "zh": "参数 {arg}：无效的选项 {value}（可选：{choices}）"},
    "error.argparse.expected": {"en": "argument {arg}: expected one argument", "zh": "参数 {arg}：需要一个值"},
    "error.argparse.invalid": {
        "en": "argument {arg}: invalid {type} value: {value}$",
        "zh": "参数 {arg}：无效的 {type} 值：{value}"},
    "error.argparse.not_allowed": {
        "en": "argument {arg}: not allowed with argument {other}$",
        "zh": "参数 {arg}：不能与参数 {other} 同时使用"},
    "error.argparse.ambiguous": {
        "en": "ambiguous option: {opt} could match {options}$",
        "zh": "有歧义的选项：{opt} 可能是 {options}"},
    # ------------------------------------------------------------ check (text report; json/github/sarif stay English)
    "check.sev.error": {"en": "  error    ", "zh": "  错误     "},
    "check.sev.warning": {"en": "  warning  ", "zh": "  警告     "},
    "check.sev.info": {"en": "  info     ", "zh": "  提示     "},
    "check.file": {"en": "  (file): ", "zh": "  （文件）："},
    "check.fix": {"en": "                 fix: ", "zh": "                 修改："},
    "check.ok": {"en": ": ok$", "zh": "：没有问题"},
    # check --inference: the document named after the release (issue 29)
    "check.summary_inf": {"en": "{n} files checked against DeepSpeed {v} (inference config): ",
                          "zh": "已按 DeepSpeed {v} 的推理配置检查 {n} 个文件："},
    "check.summary_inf_one": {"en": "1 file checked against DeepSpeed {v} (inference config): ",
                              "zh": "已按 DeepSpeed {v} 的推理配置检查 1 个文件："},
    "check.summary": {"en": "{n} files checked against DeepSpeed {v}: ", "zh": "已按 DeepSpeed {v} 检查 {n} 个文件："},
    "check.summary_one": {"en": "1 file checked against DeepSpeed {v}: ", "zh": "已按 DeepSpeed {v} 检查 1 个文件："},
    "check.not_checked": {"en": " not checked (unusable: see stderr)", "zh": " 个未检查（无法使用：见 stderr）"},
    "check.errors": {"en": "{n} errors, ", "zh": "{n} 个错误，"},
    "check.warnings": {"en": "{n} warnings, ", "zh": "{n} 个警告，"},
    "check.notes_then": {"en": "{n} notes; ", "zh": "{n} 个提示；"},
    "check.notes": {"en": "{n} notes", "zh": "{n} 个提示"},
    "check.alone_rejects": {
        "en": ": DeepSpeed alone rejects {value} here ({message})$",
        "zh": "：单用 DeepSpeed（不经 HF Trainer）时此处的 {value} 会被拒绝（" + ORIGINAL + "{message}）"},
    "check.passed_string": {
        "en": ": {value} is passed to {classes} as the string {same}$",
        "zh": "：{value} 会作为字符串 {same} 传给 {classes}"},
    "check.stores_string": {
        "en": ": DeepSpeed stores the string {value} where {types} is expected and fails when it uses it",
        "zh": "：DeepSpeed 会把字符串 {value} 原样保存（此处应为{types}），用到它时失败"},
    "check.bool_string": {
        "en": ": the string {value} where a boolean is expected: DeepSpeed reads this key unvalidated (any non-empty"
              " string counts as true)",
        "zh": "：此处应为布尔值，却是字符串 {value}：DeepSpeed 不校验这个键（任何非空字符串都算 true）"},
    "check.truth_string": {
        "en": ": the string {value}: DeepSpeed {v} tests this key's truth unvalidated, so any non-empty string"
              " counts as true (\"false\" switches it on)",
        "zh": "：字符串 {value}：DeepSpeed {v} 不经校验直接判断这个键的真假，任何非空字符串都算 true（写 \"false\""
              " 反而会打开它）"},
    "check.number_string": {
        "en": ": string {value} where a number is used (default {default}): DeepSpeedConfig does not validate this"
              " key, so the run fails later, where DeepSpeed computes with it",
        "zh": "：此处用作数字，却是字符串 {value}（默认值 {default}）：DeepSpeedConfig 不校验这个键，训练会在"
              " DeepSpeed 用它计算时才失败"},
    "check.init_fails": {"en": "; deepspeed.initialize fails", "zh": "；deepspeed.initialize 会失败"},
    "check.drops": {
        "en": ": DeepSpeed drops {value} here and uses the default {default}$",
        "zh": "：DeepSpeed 在此丢弃 {value}，改用默认值 {default}"},
    "check.raises_extra_top": {
        "en": " is not a key of the top level: DeepSpeed {v} raises (extra inputs are not permitted)",
        "zh": " 不是顶层的键：DeepSpeed {v} 会报错（" + ORIGINAL + "extra inputs are not permitted）"},
    "check.raises_top": {
        "en": " is not a key of the top level: DeepSpeed {v} raises ({message})$",
        "zh": " 不是顶层的键：DeepSpeed {v} 会报错（" + ORIGINAL + "{message}）"},
    "check.raises_extra": {
        "en": " is not a key of {section}: DeepSpeed {v} raises (extra inputs are not permitted)",
        "zh": " 不是 {section} 的键：DeepSpeed {v} 会报错（" + ORIGINAL + "extra inputs are not permitted）"},
    "check.raises": {
        "en": " is not a key of {section}: DeepSpeed {v} raises ({message})$",
        "zh": " 不是 {section} 的键：DeepSpeed {v} 会报错（" + ORIGINAL + "{message}）"},
    "check.ignored_top": {
        "en": " is not a key of the top level: silently ignored by DeepSpeed {v}",
        "zh": " 不是顶层的键：DeepSpeed {v} 会静默忽略它"},
    "check.ignored": {
        "en": " is not a key of {section}: silently ignored by DeepSpeed {v}",
        "zh": " 不是 {section} 的键：DeepSpeed {v} 会静默忽略它"},
    "check.python_name": {
        "en": " is the Python name of {name}; DeepSpeed accepts both spellings",
        "zh": " 是 {name} 的 Python 名称；DeepSpeed 两种写法都接受"},
    "check.alias_of": {
        "en": " is an alias of {name}; DeepSpeed accepts both spellings",
        "zh": " 是 {name} 的别名；DeepSpeed 两种写法都接受"},
    "check.fix_as_kwargs": {"en": "修改：write {name} as init_inference's arguments do$",
                            "zh": "修改：像 init_inference 的参数那样写 {name}"},
    "check.deprecated_said": {"en": " is deprecated ({message})$", "zh": " 已弃用（" + ORIGINAL + "{message}）"},
    "check.deprecated": {"en": " is deprecated; use {new} instead", "zh": " 已弃用；请改用 {new}"},
    "check.out_of_range": {
        "en": " is out of range: DeepSpeed requires {bound}$",
        "zh": " 超出范围：DeepSpeed 要求 {bound}"},
    "check.initialize_raises": {
        "en": ": deepspeed.initialize raises {error}: {message} (DeepSpeed ",
        "zh": "：deepspeed.initialize 会抛出 {error}：" + ORIGINAL + "{message}（DeepSpeed "},
    "check.accelerate": {
        "en": ": under the HF Trainer, accelerate raises {error}: {message} (DeepSpeed ",
        "zh": "：在 HF Trainer 下，accelerate 会抛出 {error}：" + ORIGINAL + "{message}（DeepSpeed "},
    "check.world": {
        "en": ": batch sizes are consistent only at world size ",
        "zh": "：批大小只在以下 world size 下一致："},
    "check.gone.removed_last": {
        "en": "removed in DeepSpeed {v}, last in {version}",
        "zh": "在 DeepSpeed {v} 中移除，最后出现在 {version}"},
    "check.gone.unread_last": {
        "en": "no longer read in DeepSpeed {v}, last in {version}",
        "zh": "自 DeepSpeed {v} 起不再读取，最后读取于 {version}"},
    "check.gone.renamed_last": {
        "en": "renamed to {new} in DeepSpeed {v}, last in {version}",
        "zh": "在 DeepSpeed {v} 中改名为 {new}，旧名最后出现在 {version}"},
    "check.removed_opt": {
        "en": ": optimizer {name} is unknown to DeepSpeed {v}: removed in DeepSpeed {removed} (last in {last})",
        "zh": "：DeepSpeed {v} 不认识优化器 {name}：它在 DeepSpeed {removed} 中被移除（最后出现在 {last}）"},
    "check.fix.removed_opt": {
        "en": "修改：use DeepSpeed {last} or older, or another optimizer "
              "(`dsfields lookup {section}` lists those of {v})",
        "zh": "修改：改用 DeepSpeed {last} 或更早的版本，或换一个优化器"
              "（`dsfields lookup {section}` 列出 {v} 中的全部优化器）"},
    "check.removed_sched": {
        "en": ": scheduler {name} is unknown to DeepSpeed {v}: removed in DeepSpeed {removed} (last in {last})",
        "zh": "：DeepSpeed {v} 不认识调度器 {name}：它在 DeepSpeed {removed} 中被移除（最后出现在 {last}）"},
    "check.fix.removed_sched": {
        "en": "修改：use DeepSpeed {last} or older, or another scheduler "
              "(`dsfields lookup {section}` lists those of {v})",
        "zh": "修改：改用 DeepSpeed {last} 或更早的版本，或换一个调度器"
              "（`dsfields lookup {section}` 列出 {v} 中的全部调度器）"},
    "check.unknown_opt": {
        "en": ": optimizer {name} is unknown to DeepSpeed {v} (neither its own nor in torch.optim)",
        "zh": "：DeepSpeed {v} 不认识优化器 {name}（既不是它自带的，也不在 torch.optim 中）"},
    "check.fix.default": {"en": "修改：write a value (default {default})$", "zh": "修改：写一个值（默认值 {default}）"},
    "check.fix.world": {
        "en": "修改：pass --world-size N to check for your launch, or set only two of the three",
        "zh": "修改：传入 --world-size N 按你的启动规模检查，或只设置三者中的两个"},
    "check.fix.remove_like": {
        "en": "修改：remove it (no DeepSpeed {v} key is named like it)",
        "zh": "修改：删除它（DeepSpeed {v} 没有名字相近的键）"},
    "check.fix.write_or_delete": {
        "en": "修改：write the value you want, or delete the key to get {default}$",
        "zh": "修改：写上你想要的值，或删除该键以取得 {default}"},
    "check.fix.move": {
        "en": "修改：{key} belongs in {section}: move it there",
        "zh": "修改：{key} 属于 {section}：移到那里"},
    "check.fix.delete": {"en": "修改：delete {key}$", "zh": "修改：删除 {key}"},
    "check.fix.add_stage": {
        "en": "修改：add {key}: {value} (or the stage you want)",
        "zh": "修改：添加 {key}: {value}（或你想要的阶段）"},
    "check.fix.add_hf": {
        "en": "修改：add {key} (or \"auto\" with the HF Trainer)",
        "zh": "修改：添加 {key}（使用 HF Trainer 时也可写 \"auto\"）"},
    "check.fix.quotes": {"en": "修改：write true or false without quotes", "zh": "修改：写不带引号的 true 或 false"},
    "check.fix.number": {
        "en": "修改：write a number, e.g. the default {default}$",
        "zh": "修改：写一个数字，例如默认值 {default}"},
    "check.fix.integer": {"en": "修改：set {key} to an integer", "zh": "修改：把 {key} 设为整数"},
    "check.fix.mean": {"en": "修改：did you mean {name}?", "zh": "修改：是不是想写 {name}？"},
    "check.fix.doc": {"en": "修改：write {key} as the documentation does", "zh": "修改：按文档的写法写成 {key}"},
    "check.fix.rename_form": {
        "en": "修改：rename to {key} (the value's form changes: check its documentation)",
        "zh": "修改：改名为 {key}（值的形式也变了：请查看它的文档）"},
    "check.fix.rename": {"en": "修改：rename to {key}$", "zh": "修改：改名为 {key}"},
    "check.fix.range": {
        "en": "修改：use a value {bound} (default {default})",
        "zh": "修改：使用 {bound} 的值（默认值 {default}）"},
    "check.fix.one_of": {"en": "修改：use one of: ", "zh": "修改：使用以下之一："},
    "check.fix.strict": {
        "en": "修改：write strict JSON (no comments, quoted keys)",
        "zh": "修改：写严格的 JSON（不带注释，键加引号）"},
    "check.fix.remove_default": {"en": "修改：remove the key to get the default", "zh": "修改：删除该键以取得默认值"},
    "check.fix.see": {"en": "修改：see ", "zh": "修改：参见 "},
    "check.fix.hf_or_int": {"en": ": \"auto\" (HF Trainer) or an integer", "zh": "：\"auto\"（HF Trainer）或整数"},
    "check.fix.optimizer": {
        "en": "修改：add an {section} section (e.g. {example}), pass an optimizer to deepspeed.initialize (say so"
              " with --optimizer-from-code), or use stage 0 or 3",
        "zh": "修改：添加 {section} 配置段（例如 {example}），或在代码中把优化器传给 deepspeed.initialize（用"
              " --optimizer-from-code 说明），或使用阶段 0 或 3"},
    "check.fix.write_types": {"en": "修改：write an {types}, e.g. the default {default}$",
                              "zh": "修改：写成{types}，例如默认值 {default}"},
    "check.fix.add_or_code": {"en": "修改：add an {section} section or pass one from code, or drop {key}$",
                              "zh": "修改：添加 {section} 配置段或在代码中传入，或删掉 {key}"},
    "check.fix.instead": {
        "en": "修改：write a value instead of {value} (only the keys the Trainer or accelerate fill may be {auto})",
        "zh": "修改：写一个值代替 {value}（只有 Trainer 或 accelerate 会填的键才能写 {auto}）"},
    "check.or_number": {"en": "integer or number）", "zh": "整数或数字）"},
    "check.removed_raises": {"en": ": removed: DeepSpeed {v} raises: {message}$",
                             "zh": "：已移除：DeepSpeed {v} 会报错：" + ORIGINAL + "{message}"},
    "check.ds_raises": {"en": ": DeepSpeed raises: {message}$", "zh": "：DeepSpeed 会报错：" + ORIGINAL + "{message}"},
    "check.comment": {"en": " looks like a comment key; DeepSpeed {v} ignores it here",
                      "zh": " 看起来是注释键；DeepSpeed {v} 在此忽略它"},
    "check.none": {"en": " is passed on as None (the default null is not used)",
                   "zh": " 会作为 None 传下去（不使用默认值 null）"},
    "check.expected_rejects": {"en": ": expected {types}, got {what}; DeepSpeed's validation rejects it",
                               "zh": "：应为{types}，实际是{what}；DeepSpeed 的校验会拒绝它"},
    "check.expected_unvalidated": {"en": ": expected {types}, got {what}; DeepSpeed uses it unvalidated",
                                   "zh": "：应为{types}，实际是{what}；DeepSpeed 不经校验直接使用它"},
    "check.not_one_of": {"en": " is not one of ", "zh": " 不是以下之一："},
    "check.requires": {"en": ": {cls} requires {key}, which {path} does not give",
                       "zh": "：{cls} 需要 {key}，而 {path} 没有给出"},
    "check.coerces": {"en": ": string {value} where boolean is expected; pydantic coerces it to {result}$",
                      "zh": "：此处应为布尔值，却是字符串 {value}；pydantic 会把它转换为 {result}"},
    "check.hf_no_fill": {"en": " (the HF Trainer of transformers {v} does not fill this key)",
                         "zh": "（transformers {v} 的 HF Trainer 不填这个键）"},
    "check.hf_fills_only": {"en": " (the HF Trainer fills only keys set to {value})",
                            "zh": "（HF Trainer 只填写值为 {value} 的键）"},
    "check.fix.write": {"en": "修改：write {value}$", "zh": "修改：写 {value}"},
    "check.did_you_mean": {"en": " (did you mean {name}?)", "zh": "（是不是想写 {name}？）"},
}

DIFF_KINDS_ZH = {
    "Field was added": "新增字段", "Field was removed and is now rejected": "字段已移除，现在会被拒绝",
    "Field was removed": "字段已移除", "Field was renamed": "字段已改名", "Default value was changed": "默认值已改变",
    "Type was changed": "类型已改变", "Constraint was changed": "约束已改变", "Field was deprecated": "字段已弃用",
    "Field was un-deprecated": "字段不再弃用",
    "Unknown-key handling of the section was changed": "配置段对未知键的处理已改变",
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


TOKENS = frozenset({"v", "low", "high", "n", "version"})
"""Placeholders that hold one word (a release, a count): they end where the word ends."""


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
            if part in TOKENS:
                out.append(f"(?P<{part}>[\\w.+-]+)")
            elif part in SHAPED:  # a placeholder that takes one shape only (a type list, a release, a path)
                out.append(f"(?P<{part}>{SHAPED[part]})")
            else:
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
            text = pattern.sub(lambda match, zh=zh: zh.format(**_zh_values(match.groupdict())), text)
    return _close_full_width(text)


def _close_full_width(text: str) -> str:
    """A Chinese template opens "（" where the English opened "(", and the ASCII ")" that closed it comes later in
    the same line, outside the template: it becomes "）", so every bracket closes in the form it opened. ASCII
    pairs inside (a ``file:line (function)``) are left as they are."""
    if "（" not in text:
        return text
    out, stack = [], []
    for char in text:
        if char == "\n":
            stack.clear()
        elif char in "（(":
            stack.append(char)
        elif char in "）)" and stack:
            if stack.pop() == "（":
                char = "）"
        out.append(char)
    return "".join(out)


def requested_language(argv: list[str] | tuple[str, ...]) -> str:
    """The language of refusals: ``--lang`` on the command line when it names one we speak, else the locale's.

    Never raises: it chooses the words of an error line, which must be printed whatever ``--lang`` says.
    """
    from dsfields.model.prose import language  # prose is stdlib-only too; imported late: lookup's start-up

    requested = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            requested = argv[i + 1]
        elif arg.startswith("--lang="):
            requested = arg.partition("=")[2]
    try:
        return language(requested)
    except Exception:  # an unknown --lang: the locale decides the refusal's words
        return language(None)


def say(key: str, lang: str, **values: object) -> str:
    """One catalogue entry in ``lang``, its placeholders filled."""
    entry = CATALOGUE[key]
    return (entry["zh"] if lang == "zh" else entry["en"]).format(**values)


def english_templates(*groups: str) -> list[str]:
    """The fixed English words of each entry (placeholders and Chinese removed, two words or more): what
    Chinese output must not contain."""
    out: list[str] = []
    for key, entry in CATALOGUE.items():
        if key.startswith(groups) and entry["en"] != entry["zh"]:
            for part in re.split(r"\{\w+\}", entry["en"].removesuffix("$")):
                words = re.sub(r"[^\x00-\x7f]", "", part).strip(" :;(),.")
                if len(words) > 8 and len(re.findall(r"[A-Za-z]{2,}", words)) >= 2:
                    out.append(words)
    return out


# ------------------------------------------------------------ issue 28: the English left in zh output (appended)
JSON_TYPES_ZH = {"integer": "整数", "number": "数字", "string": "字符串", "boolean": "布尔值", "object": "对象",
                 "array": "数组", "any": "任意类型"}
"""JSON type names in Chinese sentences (``null`` stays: it is the value)."""

_TYPE_WORD = r"(?:integer|number|string|boolean|object|array|null|any)"
TYPE_LIST = rf"(?:an? )?{_TYPE_WORD}(?:(?: or |, | / | \| ){_TYPE_WORD})*(?: \([A-Za-z]\w*\))?"
"""What a ``{types}`` placeholder matches: a list of JSON types, with an enum's name after it."""


def json_types_zh(text: str) -> str:
    """``an integer or null`` → ``整数或 null``: the type words of ``text`` outside its quoted values."""
    parts = re.split(r'("[^"]*")', text)
    for i in range(0, len(parts), 2):
        part = re.sub(r"^an? (?=" + _TYPE_WORD + ")", "", parts[i])
        part = re.sub(r"\b" + _TYPE_WORD + r"\b", lambda m: JSON_TYPES_ZH.get(m.group(), m.group()), part)
        parts[i] = re.sub(r" or (?=\S)", "或", part)
    return "".join(parts)


STRICTNESS_ZH = {"ignored": "静默忽略", "error": "报错", "passed": "原样传给组件", "lenient": "宽松", "strict": "严格"}
"""How a section treats unknown keys (diff's strictness change), in Chinese."""


def _zh_values(values: dict[str, str]) -> dict[str, str]:
    """The captured values as they go into a Chinese template: type lists (``types``, ``what``) and strictness
    words (``word``) in Chinese, everything else (paths, values, DeepSpeed's words) as captured."""
    out = {}
    for name, value in values.items():
        if name in ("types", "what") and value:
            value = json_types_zh(value)
        elif name in ("word", "word2"):
            value = STRICTNESS_ZH.get(value, value)
        out[name] = value
    return out


TOKENS = TOKENS | {"m", "k", "t", "nb"}
SHAPED = {"types": TYPE_LIST, "release": r"\d+\.\d+\.\d+\w*", "dotted": r"(?=[\w.-]*[._])[\w-]+(?:\.[\w-]+)*",
          "fn": r"[\w.<>]+", "word": r"[A-Za-z_][\w-]*", "word2": r"[A-Za-z_][\w-]*", "flag": r"\w+", "flag2": r"\w+"}
"""Placeholders that match one shape only, so a short template cannot take a phrase it does not mean."""

_BEFORE: dict[str, dict[str, str]] = {
    "error.z.is_not_number": {"en": "{dotted} is {value}: not a number DeepSpeed can use",
                              "zh": "{dotted} 为 {value}：不是 DeepSpeed 能用的数字"},
    "error.z.stages": {"en": "{dotted} is {value}: DeepSpeed has stages 0 to 3",
                       "zh": "{dotted} 为 {value}：DeepSpeed 只有阶段 0 到 3"},
    # applied before the entries above: each is a longer form of a phrase one of them would take first
    "check.z.fix_delete_use": {"en": "fix: delete {key} and use {new}$", "zh": "fix: 删除 {key}，改用 {new}"},
    "check.z.fix_mean_two": {"en": "fix: did you mean {a}? or {b}?$", "zh": "fix: 是不是想写 {a} 或 {b}？"},
    "check.z.fix_top": {"en": "fix: {key} belongs in the top level: move it there",
                        "zh": "fix: {key} 属于顶层：移到那里"},
    "check.z.fix_true_false": {"en": "fix: write {a} (true) or {b} (false)$",
                               "zh": "fix: 写 {a}（对应 true）或 {b}（对应 false）"},
    "check.z.fix_legacy_true": {"en": "fix: write {a} (the legacy true means stage {n})$",
                                "zh": "fix: 写 {a}（旧写法 true 表示阶段 {n}）"},
    "check.z.fix_write_a": {"en": "fix: write a {types}, e.g. the default {default}$",
                            "zh": "fix: 写成{types}，例如默认值 {default}"},
    "check.z.fix_write_type": {"en": "fix: write {types}$", "zh": "fix: 写成{types}"},
    "check.z.batch_needed": {
        "en": ": Either {a} or {b} needs to be provided",
        "zh": "：缺少批大小（" + ORIGINAL + "Either {a} or {b} needs to be provided）"},
    "check.z.hf_who_raises": {
        "en": ": under the HF Trainer, {who} raises {error}: {message} (DeepSpeed ",
        "zh": "：在 HF Trainer 下，{who} 会抛出 {error}：" + ORIGINAL + "{message}（DeepSpeed "},
    "check.z.hf_args_raises": {
        "en": ": under the HF Trainer with these arguments, {who} raises {error}: {message}$",
        "zh": "：在 HF Trainer 下用这些参数时，{who} 会抛出 {error}：" + ORIGINAL + "{message}"},
    "migrate.z.deprecated_both": {
        "en": ": deprecated, and its replacement {new} is also set (DeepSpeed asserts they are not given together);"
              " left alone: keep one",
        "zh": "：已弃用，而它的替代键 {new} 也已设置（DeepSpeed 断言二者不能同时给出）；保持不动：请只保留一个"},
    "migrate.z.deprecated_both_reads": {
        "en": ": deprecated, and its replacement {new} is also set (DeepSpeed reads only the replacement); left alone:"
              " keep one",
        "zh": "：已弃用，而它的替代键 {new} 也已设置（DeepSpeed 只读取替代键）；保持不动：请只保留一个"},
}

_AFTER: dict[str, dict[str, str]] = {
    "check.z.removed_raises_v": {"en": ": DeepSpeed {v} raises: {message}$",
                                 "zh": "；DeepSpeed {v} 会报错：" + ORIGINAL + "{message}"},
    "check.z.via": {"en": " (fill_match via find_config_node)", "zh": "（fill_match，经由 find_config_node）"},
    "check.z.hf_config": {
        "en": "looks like an HF Trainer config: {n} \"auto\" values, {m} of them filled by the Trainer (transformers "
              "{version}): {shown}. With --hf they are judged as filled: {change}; --trainer-args=\"...\" also "
              "checks them against your Trainer flags",
        "zh": "看起来是 HF Trainer 的配置：{n} 个 \"auto\" 值，其中 {m} 个由 Trainer（transformers {version}）填入："
              "{shown}。加 --hf 时按已填入判断：{change}；--trainer-args=\"...\" 还会按你的 Trainer 参数检查它们"},
    "check.z.hf_would_go": {"en": "{n} of the \"auto\" findings below ({m} errors) would go",
                            "zh": "下面的 \"auto\" 结果中有 {n} 个会消失（其中 {m} 个错误）"},
    "check.z.hf_nothing": {"en": "nothing below would change", "zh": "下面的结果都不会改变"},
    "check.z.in_all_up_to": {"en": " ({n} up to {m} in all)", "zh": "（不超过 {m} 的共 {n} 个）"},
    "check.z.in_all": {"en": " ({n} in all)", "zh": "（共 {n} 个）"},
    "check.z.fix_add_hf": {"en": "修改：add --hf if the Trainer runs this file",
                           "zh": "修改：如果这个文件由 HF Trainer 运行，加上 --hf"},
    "check.z.same_words": {"en": " (the same words in another order or split)", "zh": "（同样的词，顺序或拆分不同）"},
    "check.z.case": {"en": " (keys are case-sensitive)", "zh": "（键区分大小写）"},
    "check.z.whitespace": {"en": "修改：remove the whitespace: {key}$", "zh": "修改：去掉空白：{key}"},
    "check.z.or_mean": {"en": " (or did you mean {name}?)", "zh": "（或者是不是想写 {name}？）"},
    "check.z.both_set": {
        "en": " (deprecated) and its replacement {new} are both set; DeepSpeed asserts they are not given together",
        "zh": "（已弃用）与它的替代键 {new} 同时设置；DeepSpeed 断言二者不能同时给出"},
    "check.z.legacy_spelling": {
        "en": "(legacy spelling: DeepSpeed reads {old} only when {new} is absent, into the same {cls})",
        "zh": "（旧拼写：只有 {new} 缺失时 DeepSpeed 才读取 {old}，读入同一个 {cls}）"},
    "check.z.legacy_spelling_bare": {
        "en": "legacy spelling: DeepSpeed reads {old} only when {new} is absent, into the same {cls}$",
        "zh": "旧拼写：只有 {new} 缺失时 DeepSpeed 才读取 {old}，读入同一个 {cls}"},
    "check.z.copied": {
        "en": " is not read by DeepSpeedConfig itself: every key of {where} is copied into DeepSpeed's config ({site})"
              " for the component that uses it; it may read this key later",
        "zh": " 不由 DeepSpeedConfig 本身读取：{where} 的每个键都会被复制进 DeepSpeed 的配置（{site}），交给使用它的"
              "组件；该组件之后可能读取这个键"},
    "check.z.legacy_bool": {
        "en": "legacy boolean: DeepSpeed {v} reads it as ZeRO stage {n} (deprecated; the HF Trainer refuses it)",
        "zh": "旧的布尔写法：DeepSpeed {v} 把它读作 ZeRO 阶段 {n}（已弃用；HF Trainer 会拒绝它）"},
    "check.z.shadowed": {
        "en": " is ignored because {b} is present (DeepSpeed reads only one of them)",
        "zh": " 被忽略，因为已有 {b}（DeepSpeed 只读取其中一个）"},
    "check.z.fix_merge": {"en": "修改：merge its keys into {a} and remove {b}$",
                          "zh": "修改：把它的键合并到 {a}，并删除 {b}"},
    "check.z.positive": {"en": " must be a positive integer, got {value}$", "zh": " 必须是正整数，实际是 {value}"},
    "check.z.batch_equal": {
        "en": "train_batch_size must equal micro batch × accumulation steps × world size, and no world size fits",
        "zh": "train_batch_size 必须等于每卡微批大小 × 梯度累积步数 × world size，而没有一个 world size 满足"},
    "check.z.fix_set_or_drop": {"en": "修改：set {what}, or drop it$", "zh": "修改：设为 {what}，或删掉它"},
    "check.z.unknown_opt": {
        "en": " is unknown to DeepSpeed {v} (neither its own nor in {where}); deepspeed.initialize fails",
        "zh": " 是 DeepSpeed {v} 不认识的（既不是它自带的，也不在 {where} 中）；deepspeed.initialize 会失败"},
    "check.z.plain_code": {"en": "; plain code without --optimizer-from-code is assumed",
                           "zh": "；按不带 --optimizer-from-code 的普通代码判断"},
    "check.z.ds_init_raises": {"en": ": deepspeed.initialize raises {error}: {message} (DeepSpeed ",
                               "zh": "：deepspeed.initialize 会抛出 {error}：{message}（DeepSpeed "},
    # the launch rules' sentences (model/launch_rules.py: what each enforces, and its fix)
    "check.rule.offload-client-optimizer": {
        "en": "ZeRO-Offload of the optimizer with an optimizer built in code (not DeepSpeedCPUAdam/CPULion) is refused"
              " unless zero_force_ds_cpu_optimizer is false; under the HF Trainer accelerate swaps in DeepSpeedCPUAdam"
              " only for offload_optimizer.device, not for the legacy cpu_offload: true",
        "zh": "优化器做 ZeRO-Offload 而优化器在代码中构建（不是 DeepSpeedCPUAdam/CPULion）时会被拒绝，除非"
              " zero_force_ds_cpu_optimizer 为 false；在 HF Trainer 下，accelerate 只在 offload_optimizer.device 时换成"
              " DeepSpeedCPUAdam，旧写法 cpu_offload: true 不会"},
    "check.rule.zero-requires-optimizer": {
        "en": "ZeRO stage 1 and 2 need an optimizer: one in the config's optimizer section or one passed from code",
        "zh": "ZeRO 阶段 1 和 2 需要优化器：配置的 optimizer 段中的，或在代码中传入的"},
    "check.rule.untested-zero-optimizer": {
        "en": "with ZeRO, an optimizer DeepSpeed has not tested with ZeRO (torch.optim by name such as SGD, Lamb, the"
              " mu-P optimizers) needs zero_allow_untested_optimizer: true",
        "zh": "使用 ZeRO 时，DeepSpeed 未与 ZeRO 一起测试过的优化器（按名字取自 torch.optim 的如 SGD、Lamb，以及 mu-P"
              " 系列优化器）需要 zero_allow_untested_optimizer: true"},
    "check.rule.lamb-dynamic-loss-scale": {
        "en": "the Lamb optimizer needs dynamic loss scaling: fp16.loss_scale 0 (checked even with fp16 off)",
        "zh": "Lamb 优化器需要动态 loss scaling：fp16.loss_scale 为 0（即使 fp16 关闭也会检查）"},
    "check.rule.param-dtype-precision": {
        "en": "data_types.param_dtype must be the dtype of the enabled precision mode (fp16, bf16, else fp32)",
        "zh": "data_types.param_dtype 必须是所启用精度模式的 dtype（fp16、bf16，否则 fp32）"},
    "check.rule.scheduler-invalid-args": {
        "en": "scheduler step counts are checked when the scheduler is built: warmup_num_steps (WarmupLR,"
              " WarmupDecayLR, WarmupCosineLR) and lr_range_test_step_size are positive integers, OneCycle's"
              " cycle_first_step_size > 0 and cycle_second_step_size >= 0",
        "zh": "调度器构建时会检查步数：warmup_num_steps（WarmupLR、WarmupDecayLR、WarmupCosineLR）和"
              " lr_range_test_step_size 必须是正整数，OneCycle 的 cycle_first_step_size > 0 且"
              " cycle_second_step_size >= 0"},
    "check.rule.scheduler-onecycle-zero-cycle": {
        "en": "OneCycle divides by its total cycle size when it is built: cycle_first_step_size +"
              " cycle_second_step_size (which defaults to the first) must not be 0 (releases before OneCycle checked"
              " each half)",
        "zh": "OneCycle 构建时会除以总周期长度：cycle_first_step_size + cycle_second_step_size"
              "（后者默认等于前者）不能为"
              " 0（更早的版本分别检查两半）"},
    "check.rule.pld-theta-gamma-required": {
        "en": "progressive_layer_drop enabled needs theta and gamma: the engine reads both without a default when it"
              " builds ProgressiveLayerDrop",
        "zh": "启用 progressive_layer_drop 需要 theta 和 gamma：引擎构建 ProgressiveLayerDrop 时读取二者，"
              "且没有默认值"},
    "check.rule.batch-size-required": {
        "en": "train_batch_size or train_micro_batch_size_per_gpu must be given (gradient_accumulation_steps alone is"
              " not enough; the HF Trainer fills them only where they are \"auto\")",
        "zh": "必须给出 train_batch_size 或 train_micro_batch_size_per_gpu（只有 gradient_accumulation_steps 不够；"
              "HF Trainer 只在它们为 \"auto\" 时填入）"},
    "check.rule.zero3-hpz-requires-optimizer": {
        "en": "ZeRO-3 with zero_hpz_partition_size > 1 and no optimizer fails: the engine calls a method only the"
              " ZeRO-3 optimizer has (a DeepSpeed bug, at any world size)",
        "zh": "ZeRO-3 在 zero_hpz_partition_size > 1 且没有优化器时会失败：引擎调用了只有 ZeRO-3 优化器才有的方法"
              "（DeepSpeed 的 bug，与 world size 无关）"},
    "check.rule.hf-zero-section-required": {
        "en": "under the HF Trainer, accelerate's DeepSpeedPlugin needs a zero_optimization section",
        "zh": "在 HF Trainer 下，accelerate 的 DeepSpeedPlugin 需要 zero_optimization 配置段"},
    "check.rule.hf-unfilled-auto": {
        "en": "under the HF Trainer, every \"auto\" left after the Trainer's and accelerate's fills is refused",
        "zh": "在 HF Trainer 下，Trainer 和 accelerate 填完之后仍剩下的每个 \"auto\" 都会被拒绝"},
    "check.rule.hf-zero-optimization-object": {
        "en": "under the HF Trainer, zero_optimization must be an object: the Trainer and accelerate look keys up"
              " in it",
        "zh": "在 HF Trainer 下，zero_optimization 必须是对象：Trainer 和 accelerate 会在其中查找键"},
    "check.rule.zero-optimization-bool-accepted": {
        "en": "plain DeepSpeed still reads the legacy \"zero_optimization\": true / false (stage 1 / 0, deprecated)",
        "zh": "单用 DeepSpeed 时仍会读取旧写法 \"zero_optimization\": true / false（阶段 1 / 0，已弃用）"},
    "check.rule.fix.offload-client-optimizer": {
        "en": "修改：set {a} and let DeepSpeed (or accelerate) use DeepSpeedCPUAdam, define the optimizer in the"
              " config's {b} section, or set {c}$",
        "zh": "修改：设置 {a}，让 DeepSpeed（或 accelerate）使用 DeepSpeedCPUAdam；或在配置的 {b} 段中定义优化器；"
              "或设置 {c}"},
    "check.rule.fix.untested-zero-optimizer": {
        "en": "修改：set {a}, or use Adam/AdamW/Adagrad/Lion",
        "zh": "修改：设置 {a}，或改用 Adam/AdamW/Adagrad/Lion"},
    "check.rule.fix.lamb-dynamic-loss-scale": {
        "en": "修改：set {a} (dynamic), or use another optimizer",
        "zh": "修改：设置 {a}（动态），或换一个优化器"},
    "check.rule.fix.param-dtype-precision": {
        "en": "修改：enable the matching {a} section, or delete data_types.param_dtype",
        "zh": "修改：启用对应的 {a} 配置段，或删除 data_types.param_dtype"},
    "check.rule.fix.scheduler-invalid-args": {
        "en": "修改：use a positive integer number of steps (e.g. {n})",
        "zh": "修改：使用正整数的步数（例如 {n}）"},
    "check.rule.fix.scheduler-onecycle-zero-cycle": {
        "en": "修改：use a positive cycle_first_step_size (e.g. {n})",
        "zh": "修改：使用正的 cycle_first_step_size（例如 {n}）"},
    "check.rule.fix.pld-theta-gamma-required": {
        "en": "修改：add {a} (e.g. {x}) and {b} (e.g. {y}) to progressive_layer_drop",
        "zh": "修改：在 progressive_layer_drop 中添加 {a}（例如 {x}）和 {b}（例如 {y}）"},
    # migrate's own sentences (the rest of its report goes through check's entries above)
    "migrate.z.rejects_names": {
        "en": ": DeepSpeed {v} rejects it and names {key}, which the file sets to {value}, not {other}: keep one",
        "zh": "：DeepSpeed {v} 会拒绝它并指出 {key}，而文件把它设为 {value}，不是 {other}；请只保留一个"},
    "migrate.z.not_pinned": {"en": "; not pinned: DeepSpeed {v} does not accept null there",
                             "zh": "；未固定：DeepSpeed {v} 在此不接受 null"},
    "migrate.z.converts_unknown": {
        "en": ": deprecated; DeepSpeed converts its value for {target} in a way dsfields does not know; left alone",
        "zh": "：已弃用；DeepSpeed 会为 {target} 转换它的值，但 dsfields 不知道怎么转换；保持不动"},
    "migrate.z.ignores_deleted": {
        "en": ": deprecated, and DeepSpeed {v} ignores its value; use {new}; deleted",
        "zh": "：已弃用，且 DeepSpeed {v} 忽略它的值；请改用 {new}；已删除"},
    "migrate.z.ignores_deleted_bare": {
        "en": ": deprecated, and DeepSpeed {v} ignores its value; deleted",
        "zh": "：已弃用，且 DeepSpeed {v} 忽略它的值；已删除"},
    "migrate.z.bool_form": {"en": " (the dict DeepSpeed builds from the boolean form: ",
                            "zh": "（DeepSpeed 由布尔写法生成的字典："},
    "migrate.z.legacy.zero": {
        "en": "stage = 1 if the value else 0; at stage 1 allgather_bucket_size = allgather_size (default 5e8)",
        "zh": "值为真时 stage = 1，否则为 0；阶段 1 时 allgather_bucket_size = allgather_size（默认 5e8）"},
    "migrate.z.legacy.bf16": {"en": "bf16 is read, and bfloat16 only when bf16 is absent",
                              "zh": "DeepSpeed 读取 bf16，只有 bf16 缺失时才读取 bfloat16"},
    "migrate.z.legacy.pin": {
        "en": "DeepSpeedZeroConfig.cpu_offload_use_pin_memory is deprecated with new_param 'offload_param or "
              "offload_optimizer' and set_new_param=False: the value is not carried",
        "zh": "DeepSpeedZeroConfig.cpu_offload_use_pin_memory 已弃用（new_param 'offload_param or offload_optimizer'，"
              "set_new_param=False）：它的值不会被转过去"},
    "migrate.z.legacy.max_grad_norm": {
        "en": "deepspeed.initialize raises on it among the optimizer's params (the engine's basic-optimizer setup) and "
              "names gradient_clipping, which clips by the same global norm",
        "zh": "deepspeed.initialize 在优化器参数中遇到它会报错（引擎构建基础优化器时），并指出 gradient_clipping："
              "后者按同样的全局范数裁剪"},
    "migrate.z.legacy.curriculum": {
        "en": "the legacy section went whole to CurriculumScheduler, the class the data sampler builds for each of "
              "curriculum_metrics ({where}): one class reads min_difficulty, max_difficulty, schedule_type and "
              "schedule_config in both",
        "zh": "旧配置段整体交给 CurriculumScheduler，也就是数据采样器为 curriculum_metrics 中每个指标构建的类"
              "（{where}）：两种写法都由这同一个类读取 min_difficulty、max_difficulty、schedule_type 和"
              " schedule_config"},
    "migrate.z.legacy.curriculum_lost": {
        "en": "the legacy scheduler ran in the engine and passed curriculum_seqlen to the model's forward ({a}, "
              "curriculum_type {seqlen}); the data sampler that reads the new section orders samples by a metric the"
              " data analyzer computed and needs, per metric, difficulty_type ({b} or {c}), clustering_type ({d} or"
              " {e}) and, unless single_cluster, index_to_sample_path and index_to_metric_path ({f})",
        "zh": "旧调度器在引擎中运行，并把 curriculum_seqlen 传给模型的 forward（{a}，curriculum_type {seqlen}）；"
              "读取新配置段的数据采样器按数据分析器算出的指标给样本排序，每个指标需要 difficulty_type（{b} 或 {c}）、"
              "clustering_type（{d} 或 {e}），以及（除非是 single_cluster）index_to_sample_path 和"
              " index_to_metric_path（{f}）"},
    "migrate.z.moved_not_equal": {"en": ": moved, but not equivalent: ", "zh": "：已移动，但并不等价："},
    "migrate.z.fill_in": {"en": "; fill in {needs} under {where}$", "zh": "；请在 {where} 下填写 {needs}"},
    "migrate.z.no_counterpart": {"en": ": {keys} have no counterpart in {where}; not carried",
                                 "zh": "：{keys} 在 {where} 中没有对应项；未迁移"},
    "migrate.z.not_moved": {"en": "; not moved because {why}: merge it into {where} by hand",
                            "zh": "；未移动，因为{why}：请手工合并到 {where}"},
    "migrate.z.not_object": {"en": "因为it is not an object", "zh": "因为它不是对象"},
    "migrate.z.also_in": {"en": "因为{key} is also in the file", "zh": "因为文件中也有 {key}"},
    "migrate.z.bf16_both": {"en": ": bf16 is also given and DeepSpeed {v} reads only bf16 then (",
                            "zh": "：同时给出了 bf16，此时 DeepSpeed {v} 只读取 bf16（"},
    "migrate.z.deleted_end": {"en": "); deleted$", "zh": "）；已删除"},
    "migrate.z.carried_to": {"en": " carried to {targets} (DeepSpeed {old} ignored this key: ",
                             "zh": " 已转到 {targets}（DeepSpeed {old} 忽略这个键："},
    "migrate.z.carried_from": {"en": " (carried from {key})$", "zh": "（由 {key} 转来）"},
    "migrate.z.ignored_nothing": {
        "en": "); the file offloads nothing it could be carried to; deleted",
        "zh": "）；文件中没有可以接收它的 offload 配置；已删除"},
    "migrate.z.deprecated_ignored": {"en": ": deprecated and ignored (", "zh": "：已弃用且被忽略（"},
    "migrate.z.allgather": {"en": ": read only for the boolean zero_optimization, now {target}; deleted",
                            "zh": "：只在布尔写法的 zero_optimization 中读取，现为 {target}；已删除"},
    "migrate.z.allgather_off": {"en": ": read only for the boolean zero_optimization, unread when it is false; deleted",
                                "zh": "：只在布尔写法的 zero_optimization 中读取，为 false 时不读取；已删除"},
    "migrate.z.ignores_dropped": {"en": ": DeepSpeed {v} ignores it, deleted (--drop-ignored)",
                                  "zh": "：DeepSpeed {v} 忽略它，已删除（--drop-ignored）"},
    "migrate.z.means_no": {"en": "; {value} means no {target} (DeepSpeed sets it to null, the default); deleted",
                           "zh": "；{value} 表示没有 {target}（DeepSpeed 将其设为默认值 null）；已删除"},
    "migrate.z.no_integer": {
        "en": " was taken as written by DeepSpeed {old}; DeepSpeed {new} takes only an integer here and no integer "
              "equals it: choose ",
        "zh": " 在 DeepSpeed {old} 中按原样使用；DeepSpeed {new} 此处只接受整数，而没有整数等于它：请从中选择 "},
    "migrate.z.hf_refuses": {"en": " (the HF Trainer refuses it: ", "zh": "（HF Trainer 会拒绝它：" + ORIGINAL},
    "migrate.z.from_rule": {"en": " (from {path})$", "zh": "（来自 {path}）"},
    "error.z.defaults_path_in": {"en": "{dotted} in {release}", "zh": "{dotted}（{release}）"},
    # estimate's formula lines (text output; --format json keeps them English, as every machine format)
    "estimate.z.one_buffer": {"en": " (one buffer at stage 3, overlap_comm or not)",
                              "zh": "（阶段 3 只有一个缓冲区，与 overlap_comm 无关）"},
    "estimate.z.second_buffer": {"en": " (a second buffer with overlap_comm)", "zh": "（overlap_comm 时多一个缓冲区）"},
    "estimate.z.in_place": {
        "en": "0: the updated partitions are all-gathered in place into the flat 16-bit buffer "
              "(all_gather_into_tensor);"
              " allgather_bucket_size {n} only splits the calls where that is missing, into views of the same buffer",
        "zh": "0：更新后的分区被原地 all-gather 进扁平的 16 位缓冲区（all_gather_into_tensor）；allgather_bucket_size"
              " {n} 只在缺少该函数时把调用拆成同一缓冲区上的多个视图"},
    "estimate.z.largest_param": {"en": "largest parameter ≤ largest layer ", "zh": "最大参数 ≤ 最大层 "},
    "estimate.z.retained": {"en": " - largest layer - retained)", "zh": " - 最大层 - 保留量)"},
    "estimate.z.largest": {"en": "P - largest layer)", "zh": "P - 最大层)"},
    "estimate.z.persistent": {"en": "{n} elements of tensors ≤ param_persistence_threshold {t} × {nb} B",
                              "zh": "{n} 个元素（各张量 ≤ param_persistence_threshold {t}）× {nb} B"},
    "estimate.z.pinned_zero2": {"en": " ranks (fp32 weights 4 + 16-bit copy 2 + fp32 gradients 4)",
                                "zh": " 张卡（fp32 权重 4 + 16 位副本 2 + fp32 梯度 4）"},
    "estimate.z.ranks": {"en": " × {n} ranks", "zh": " × {n} 张卡"},
    "estimate.z.params16": {"en": "16-bit params 2", "zh": "16 位参数 2"},
    "estimate.z.sub_group_grads": {"en": "fp32 gradients 4 + sub-group gradients 4", "zh": "fp32 梯度 4 + 子组梯度 4"},
    "estimate.z.fp32_grads": {"en": "(fp32 gradients 4)", "zh": "(fp32 梯度 4)"},
    "estimate.z.partition": {"en": " B × partition ", "zh": " B × 分区 "},
    "estimate.z.partition_min": {"en": ", partition {n})", "zh": "，分区 {n})"},
    "estimate.z.nvme_opt": {"en": " × aligned largest sub-group {n} × 4 B (pinned)",
                            "zh": " × 对齐后的最大子组 {n} × 4 B（锁页）"},
    "estimate.z.nvme_param": {"en": " × aligned buffer_size {n} × ", "zh": " × 对齐后的 buffer_size {n} × "},
    "estimate.z.gds": {"en": " (on the GPU: aio.use_gds)", "zh": "（在 GPU 上：aio.use_gds）"},
    "estimate.z.pinned": {"en": " (pinned)", "zh": "（锁页）"},
    "estimate.z.stage0": {"en": " (stage 0: nothing partitioned; the byte split of the zero2 formula)",
                          "zh": "（阶段 0：不切分任何状态；按 zero2 公式的字节拆分）"},
    "estimate.z.zero1": {"en": " (ZeRO-1: 16-bit gradients not partitioned)", "zh": "（ZeRO-1：16 位梯度不切分）"},
    "estimate.z.paper": {"en": "[Korthikanti et al. 2022, arXiv:2205.05198, eq. 1 and section 5]",
                         "zh": "[Korthikanti 等，2022，arXiv:2205.05198，式 1 与第 5 节]"},
    "estimate.z.layers": {"en": "layers {n} × ", "zh": "层数 {n} × "},
    "estimate.z.no_heads": {"en": " (no --heads: attention scores not stored, as with flash attention)",
                            "zh": "（未给 --heads：不保存注意力分数，与 flash attention 相同）"},
    "estimate.z.recompute": {"en": "one layer recomputed in backward: ", "zh": "反向时重算一层："},
    "estimate.z.host_ckpt": {"en": " (host memory: cpu_checkpointing)", "zh": "（主机内存：cpu_checkpointing）"},
    "estimate.z.off_on": {"en": ": off → on — ", "zh": "：关 → 开 — "},
    "estimate.z.off_on_first": {"en": " (off → on), ", "zh": "（关 → 开），"},
    "estimate.z.first_change": {"en": " ({change}), 节省 ", "zh": "（{change}），节省 "},
    "estimate.z.per_rank": {"en": " GPU/rank", "zh": " GPU/卡"},
    "estimate.z.host_rank": {"en": " 主机/rank", "zh": " 主机/卡"},
    "estimate.z.host_node": {"en": " 主机/node", "zh": " 主机/节点"},
    "estimate.z.nvme_node": {"en": " NVMe/node", "zh": " NVMe/节点"},
    "estimate.z.activations": {"en": "  activations   ", "zh": "  激活值        "},
    "estimate.z.checkpoints": {"en": "  checkpoints   ", "zh": "  检查点        "},
    "estimate.z.saves_semicolon": {"en": "GiB; ", "zh": "GiB；"},
    "estimate.z.saves_semicolon_mib": {"en": "MiB; ", "zh": "MiB；"},
    # lookup's fixed words (model/wording.py and lookup.py; the row labels are translated where they are drawn)
    "lookup.z.default_factory": {"en": "(default factory: ", "zh": "（默认工厂："},
    "lookup.z.default_end": {"en": "(default: {value})$", "zh": "（默认值：{value}）"},
    "lookup.z.default": {"en": "(default: ", "zh": "（默认值："},
    "lookup.z.required": {"en": "(required)", "zh": "（必填）"},
    "lookup.z.no_default": {"en": "(no default: absent means not set)", "zh": "（无默认值：不写即不设置）"},
    "lookup.z.any_of": {"en": "any ({types})", "zh": "任意类型（{types}）"},
    "lookup.z.strict": {"en": "strict: an unknown key is an error", "zh": "严格：未知键会报错"},
    "lookup.z.lenient": {"en": "lenient: an unknown key is silently ignored", "zh": "宽松：未知键被静默忽略"},
    "lookup.z.kept": {"en": "unknown keys are kept", "zh": "未知键会被保留"},
    "lookup.z.passed": {"en": "any key is passed on as is", "zh": "任何键都原样传递"},
    "lookup.z.not_recorded": {"en": "unknown keys: not recorded", "zh": "未知键：未记录"},
    "lookup.z.auto_accepted": {"en": "accepted: dropped, the default is used", "zh": "接受：丢弃它并使用默认值"},
    "lookup.z.auto_kept": {"en": "kept as string", "zh": "按字符串保留"},
    "lookup.z.auto_rejected_why": {"en": "\"auto\"       rejected ({message})$",
                                   "zh": "\"auto\"       拒绝（" + ORIGINAL + "{message}）"},
    "lookup.z.auto_rejected": {"en": "\"auto\"       rejected$", "zh": "\"auto\"       拒绝"},
    "lookup.z.to_default": {"en": "→ default$", "zh": "→ 默认值"},
    "lookup.z.not_carried": {"en": "its value is not carried over to {new}", "zh": "它的值不会转给 {new}"},
    "lookup.z.converted": {"en": "its value is converted and copied to {new} (setting both is an error)",
                           "zh": "它的值会被转换并复制到 {new}（两者都设置会报错）"},
    "lookup.z.copied": {"en": "its value is copied to {new} (setting both is an error)",
                        "zh": "它的值会被复制到 {new}（两者都设置会报错）"},
    "lookup.z.deprecated_to": {"en": "deprecated → ", "zh": "已弃用 → "},
    "lookup.z.deprecated_semi": {"en": "deprecated; ", "zh": "已弃用；"},
    "lookup.z.in_fn": {"en": " in {fn}()", "zh": "，{fn}() 中"},
    "lookup.z.in_table": {"en": " in {fn}$", "zh": "，{fn} 中"},
    "lookup.z.at_stage": {"en": " (at ZeRO stage {n})", "zh": "（ZeRO 阶段 {n}）"},
    "lookup.z.stage_dependent": {"en": "stage-dependent: ", "zh": "随阶段而定："},
    "lookup.z.stage_decides": {"en": " (the stage decides when the key is absent)", "zh": "（不写该键时由阶段决定）"},
    "lookup.z.stages": {"en": "stages {n}–{m}", "zh": "阶段 {n}–{m}"},
    "lookup.z.stage_n": {"en": "stage {n}: ", "zh": "阶段 {n}："},
    "lookup.z.when_absent": {"en": "when absent", "zh": "不写时"},
    "lookup.z.multiple": {"en": "multiple of {n}", "zh": "{n} 的倍数"},
    "lookup.z.length": {"en": "length ", "zh": "长度 "},
    "lookup.z.with_default": {"en": "with default {value} at {where}$", "zh": "在 {where} 处默认值为 {value}"},
    "lookup.z.with_default_mid": {"en": "with default {value} at {where}; ", "zh": "在 {where} 处默认值为 {value}；"},
    "lookup.z.when_set_true": {"en": " when set to a true value", "zh": "（当值为真时）"},
    "lookup.z.when_set": {"en": " when set to ", "zh": "，当值为 "},
    "lookup.z.from_dict_by": {"en": "none: read from the dict by {fn}()", "zh": "无：由 {fn}() 从 dict 读取"},
    "lookup.z.from_dict": {"en": "none: read from the dict", "zh": "无：从 dict 读取"},
    "lookup.z.top": {"en": "(top level)", "zh": "（顶层）"},
    "lookup.z.section_fields": {"en": ": section, {n} fields", "zh": "：配置段，{n} 个字段"},
    "lookup.z.section_fields_line": {"en": "  section, {n} fields", "zh": "  配置段，{n} 个字段"},
    "lookup.z.removed_header": {"en": ": removed$", "zh": "：已移除"},
    "lookup.z.removed_line": {"en": "  removed$", "zh": "  已移除"},
    "lookup.z.fields": {"en": "fields:$", "zh": "字段："},
    "lookup.z.raises_if_set": {"en": "DeepSpeed {v} raises this message if the key is set",
                               "zh": "设置该键时 DeepSpeed {v} 会报出上面的消息"},
    "lookup.z.no_field_inf": {"en": "no field {q} in DeepSpeed {v}'s inference config",
                              "zh": "DeepSpeed {v} 的推理配置中没有字段 {q}"},
    "lookup.z.no_field": {"en": "no field {q} in DeepSpeed {v}", "zh": "DeepSpeed {v} 中没有字段 {q}"},
    "lookup.z.did_you_mean": {"en": "; did you mean:", "zh": "；是不是想找："},
    "lookup.z.section_hint": {"en": "(a section name, e.g. zero_optimization, lists the fields inside it)",
                              "zh": "（写配置段名称，例如 zero_optimization，会列出其中的字段）"},
    "lookup.z.pattern": {
        "en": " resolves to the pattern path {p}: {g} is a user-named group (any name works there)",
        "zh": " 对应模式路径 {p}：{g} 是用户自己命名的分组（那里写任何名字都可以）"},
    "lookup.z.more": {"en": " (+{n} more)", "zh": "（另有 {n} 处）"},
    "lookup.z.default_line": {"en": ", default {name} (line {n})", "zh": "，默认值 {name}（第 {n} 行）"},
    "lookup.z.any_alone": {"en": " any （", "zh": " 任意类型（"},
    "lookup.z.type_removed_last": {"en": "removed (last in {v})", "zh": "已移除（最后出现在 {v}）"},
    # lookup --history
    "lookup.z.hist_none": {"en": "history: not in any committed snapshot", "zh": "历史：不在任何已提交的快照中"},
    "lookup.z.hist": {"en": "history ({n} snapshots: ", "zh": "历史（{n} 个快照："},
    "lookup.z.hist_one": {"en": "history (1 snapshot: ", "zh": "历史（1 个快照："},
    "lookup.z.oldest": {"en": "present in the oldest snapshot: ", "zh": "最早的快照中已有："},
    "lookup.z.h_reintroduced": {"en": "reintroduced: ", "zh": "重新引入："},
    "lookup.z.h_introduced": {"en": "introduced: ", "zh": "引入："},
    "lookup.z.h_type": {"en": "type changed: ", "zh": "类型改变："},
    "lookup.z.h_default": {"en": "default changed: ", "zh": "默认值改变："},
    "lookup.z.h_renamed": {"en": "renamed: ", "zh": "改名："},
    "lookup.z.h_removed_rejected": {"en": "removed and rejected", "zh": "已移除，设置会被拒绝"},
    "lookup.z.h_removed": {"en": "removed (no longer read)", "zh": "已移除（不再读取）"},
    "lookup.z.h_undeprecated": {"en": "undeprecated", "zh": "不再弃用"},
    "lookup.z.h_no_longer_rejected": {"en": "no longer rejected", "zh": "不再被拒绝"},
    "lookup.z.h_deprecated_end": {"en": "  deprecated$", "zh": "  已弃用"},
    "lookup.z.h_deprecated_semi": {"en": "; deprecated$", "zh": "；已弃用"},
    # diff: how a section treats unknown keys, and a choices constraint
    "diff.z.strict": {"en": "未知键：{word} → {word2}", "zh": "未知键：由{word}改为{word2}"},
    "diff.z.choices": {"en": "choices: ", "zh": "可选值："},
    # resolve: the TrainingArguments flags the Trainer fills a key from
    "resolve.z.flag_or": {"en": " ({flag} or {flag2})$", "zh": " ({flag} 或 {flag2})"},
    "error.z.and_more": {"en": " and {n} more)", "zh": " 等，另有 {n} 处）"},
}

_rest = dict(CATALOGUE)
CATALOGUE.clear()
CATALOGUE.update(_BEFORE)
CATALOGUE.update(_rest)
CATALOGUE.update(_AFTER)
del _rest
