"""The site's own words in each language: English is the key, Chinese its translation (``_`` in templates).

DeepSpeed's docstrings and messages stay as DeepSpeed wrote them (quoted); our explanations come
from ``dsfields/prose``. What is left are the labels and sentences of the templates, listed here so
the Chinese site says them in Chinese; a string without a translation falls back to English.
"""

from __future__ import annotations

import re
from collections.abc import Callable

LANGUAGES = ("en", "zh")

ZH: dict[str, str] = {
    "stage {n}": "ZeRO 阶段 {n}",
    # Sentences of the templates and of Release.history_line ({v}, {n} ... are filled in after translation).
    "Every key links to its entry in the full dictionary.": "每个键都链接到它在完整字典中的条目。",
    "rejected": "拒绝",
    "rejected: DeepSpeed raises a validation error": "拒绝：DeepSpeed 报校验错误",
    "silently ignored": "静默忽略",
    "kept but unused: no error": "保留但不使用：不报错",
    "passed on as a whole: any key is kept, a typo goes unnoticed": "整体透传：任何键都保留，拼错也不会被发现",
    "accepted; the default is used": "接受；使用默认值",
    "accepted": "接受",
    'accepted and kept as the string <code>"auto"</code>': '接受，并原样保留字符串 <code>"auto"</code>',
    'accepted and kept as the string <code>"auto"</code>, which counts as true: it switches this on':
        '接受，并原样保留字符串 <code>"auto"</code>；非空字符串按真值处理，所以会打开该项',
    ("A misspelled key is only reported where DeepSpeed validates the section with a strict pydantic model\n"
     "(`extra=\"forbid\"`). Everywhere else the key is read with `dict.get`, so a typo silently leaves the\n"
     "default in place. Check a config against this release instead of grepping the source:\n"
     "`dsfields check ds_config.json --version {v}`."):
        ("只有 DeepSpeed 用严格的 pydantic 模型（`extra=\"forbid\"`）校验的节才会报告拼错的键。\n"
         "其他地方都用 `dict.get` 读取，拼错的键会被静默忽略，默认值照旧生效。与其翻源码，不如直接用本版本检查配置：\n"
         "`dsfields check ds_config.json --version {v}`。"),
    "{n} of {m} sections reject unknown keys.": "{m} 个节中有 {n} 个拒绝未知键。",
    "Official docs vs code": "官方文档与代码对照",
    "official docs vs code": "官方文档与代码对照",
    ("DeepSpeed's own configuration page (`{file}` at `{ref}`) states a default for {n} keys that this release's "
     "snapshot has; for {k} of them DeepSpeed's code uses another value. The code is what runs: the value below "
     "comes from the source line named, read from the release itself."):
        ("DeepSpeed 自己的配置文档（`{ref}` 的 `{file}`）为本版本快照中的 {n} 个键写明了默认值；"
         "其中 {k} 个与 DeepSpeed 代码实际使用的值不同。"
         "实际运行的是代码：下表的值来自所列源码行，直接读自该版本本身。"),
    ("DeepSpeed {v} has no tag in the repository clone this page was read from (the clone predates the release): "
     "the page compared is the newest one the clone holds, commit `{commit}` of {date}, so a default the release "
     "changed after that date shows here as a disagreement."):
        ("本页读取官方文档所用的仓库副本早于 DeepSpeed {v} 的发布，其中没有该版本的标签："
         "这里对照的是副本中最新的一版文档，即 {date} 的提交 `{commit}`；"
         "该日期之后本版本改动的默认值会在下表中显示为不一致。"),
    "Effective when omitted (DeepSpeed derives it, world size 1)":
        "省略时的实际值（由 DeepSpeed 推导，world size 为 1）",
    "with": "配置为",
    "Example": "示例",
    "Example: every key of this section at its default in DeepSpeed {v}": "示例：本节每个键取 DeepSpeed {v} 的默认值",
    ("Types: where the page and the code both name a plain type (boolean, integer, float, string), "
     "they differ for {t} keys."):
        "类型：文档和代码都写明简单类型（boolean、integer、float、string）的键中，有 {t} 个不一致。",
    "docs say": "文档写",
    "code reads": "代码读取为",
    "Docs say": "文档写的",
    "Code uses": "代码使用",
    "No disagreement: every default the page states is the one the code uses.":
        "没有不一致：文档写明的每个默认值都与代码一致。",
    "does not fill this key": "不会填写这个键",
    "DeepSpeed's docs": "DeepSpeed 官方文档",
    "say": "写的是",
    "its code uses": "代码实际使用",
    "A misspelled key": "拼错的键",
    "dict reader": "dict 读取",
    "Deprecated → replacement": "已弃用 → 替代键",
    "Still accepted, with a deprecation warning; pydantic marks them (`json_schema_extra` / `extra`).":
        "仍然接受，但会给出弃用警告；由 pydantic 标注（`json_schema_extra` / `extra`）。",
    "Replacement": "替代键",
    "Value converted": "值会转换",
    "Message": "消息",
    "None in this release.": "本版本没有。",
    "Removed keys": "已移除的键",
    "DeepSpeed raises with this message when the key is present.": "只要配置里出现这个键，DeepSpeed 就以这条消息报错。",
    "DeepSpeed's message": "DeepSpeed 的消息",
    ("Three widely shared \"ready to use\" configurations, checked against\nDeepSpeed {v}. The `\"auto\"` values are "
     "filled in by the Hugging Face Trainer integration;\nthe last column says what DeepSpeed does with `\"auto\"` "
     "when nothing fills it in."):
        ("三份流传很广的“开箱即用”配置，逐项对照 DeepSpeed {v} 检查。其中的 `\"auto\"` 由 Hugging Face Trainer\n"
         "集成填入；最后一列说明没有人填入时 DeepSpeed 自己如何处理 `\"auto\"`。"),
    "Often shared as": "常见的流传名称：",
    "Not in DeepSpeed {v}": "DeepSpeed {v} 中没有",
    "Left out below because this release does not read them": "本版本不读取这些键，下方已略去",
    "Value": "取值",
    '<code>"auto"</code> here (DeepSpeed alone)': '此处的 <code>"auto"</code>（仅 DeepSpeed）',
    "present in the oldest snapshot ({v})": "最早的快照（{v}）中已存在",
    "added in {v}": "{v} 新增",
    "back in {v}": "{v} 重新加入",
    "{kind} in {v}: {change}": "{v} {kind}：{change}",
    "default changed": "默认值变更",
    "type changed": "类型变更",
    "constraints changed": "取值范围变更",
    "choices changed": "可选值变更",
    "rejected from {v} on": "自 {v} 起被拒绝",
    "no longer rejected from {v} on": "自 {v} 起不再被拒绝",
    "renamed in {v}: {old} → {new}": "{v} 改名：{old} → {new}",
    "{kind} in {v}": "{v} {kind}",
    "removed": "移除",
    "deprecated": "弃用",
    "Default": "默认值",
    "Type": "类型",
    "Path": "路径",
    "Python name": "Python 名称",
    "read by pydantic": "由 pydantic 读取",
    "read with dict.get": "通过 dict.get 读取",
    "Effective default (decided by a validator)": "实际默认值（由校验器决定）",
    "Also read with default": "另一处读取，默认值",
    "Allowed values": "允许的取值",
    "Constraints": "约束",
    "Required": "必填",
    "Requires": "需要",
    "in every entry of the user-named group": "用户命名分组的每个条目中都必须给出",
    "whenever its section is given": "只要给出其所在的节，就必须给出",
    "a value": "取值须",
    "Checked": "检查时机",
    "when DeepSpeed builds": "DeepSpeed 构建时检查",
    "when set to a true value": "取真值时",
    "when set to": "取值为",
    "beside": "且设置了",
    "yes": "是",
    "no": "否",
    '"auto" (DeepSpeed alone)': '"auto"（仅 DeepSpeed）',
    '"auto" under the HF Trainer': 'HF Trainer 下的 "auto"',
    "from": "来自",
    "A misspelled key next to it": "同一节中拼错的键",
    "Deprecated": "已弃用",
    "use": "请改用",
    "Removed": "已移除",
    "DeepSpeed raises": "DeepSpeed 报错",
    "Source": "源码",
    "History": "历史",
    "Pitfall": "易错点",
    "DeepSpeed's docstring": "DeepSpeed 源码中的说明（原文）",
    "at": "位于",
    "Key": "键",
    "Keys": "键数",
    "section": "节",
    "Section": "节",
    "Unknown keys": "未知键",
    "Read by": "读取方式",
    "Sub-sections": "子节",
    "pydantic model": "pydantic 模型",
    "dict reader (.get with a default)": "dict 读取（带默认值的 .get）",
    "Group": "分组",
    "DeepSpeed": "DeepSpeed",
    "newest": "最新",
    "all versions": "全部版本",
    "overview": "概览",
    "default values": "默认值",
    "enums": "枚举",
    "deprecated and removed": "弃用与移除",
    "templates A/B/C": "模板 A/B/C",
    "typos and errors": "拼写错误与报错",
    "what changed": "变更",
    "optimizers and schedulers": "优化器与调度器",
    "config fields": "配置字段",
    "Top-level keys": "顶层键",
    "Overview": "概览",
    "Default values": "默认值",
    "Enums": "枚举",
    "Config skeleton": "配置骨架",
    "config skeleton": "配置骨架",
    ("Every section of a ds_config on one screen, in the groups of the overview: top-level keys at their defaults, "
     "each section with its `enabled` switch where it has one and the number of keys it holds. Every key links to "
     "its entry; a section keeps its defaults until you set them."):
        ("一屏看完 ds_config 的每个节，按概览的分组排列：顶层键取默认值，每个节列出它的 `enabled` 开关（如有）"
         "和它包含的键数。每个键都链接到它的条目；节里的键在你设置之前都取默认值。"),
    "Deprecated and removed": "弃用与移除",
    "Templates A/B/C": "模板 A/B/C",
    "Typos and errors": "拼写错误与报错",
    "What changed": "变更",
    "Optimizers and schedulers": "优化器与调度器",
    "All versions": "全部版本",
    "Added since": "新增字段（按日期）",
    "Changes between two releases": "任意两个版本之间的变更",
    "Field history": "字段历史",
    "Section groups": "分组规则",
    "Snapshot format": "快照格式",
    "resolve and migrate": "resolve 与 migrate",
    "Memory estimate": "内存估算",
    "Practitioner journeys": "实践问答",
    "check in CI": "在 CI 中检查",
    "Editor schema": "编辑器 schema",
    "This page is for developers and is written in English only.": "本页是面向开发者的格式说明，只有英文版。",
    "Home": "首页",
    "Guides": "指南",
    "Across releases": "跨版本",
    "released": "发布于",
    "Released": "发布日期",
    "Removed in": "移除于",
    "Added in": "新增于",
    "Optimizer types": "优化器类型",
    "Scheduler types": "调度器类型",
    "Parameter": "参数",
    "required": "必填",
    "Builds": "构建的类",
    "Same page for DeepSpeed": "以下版本此页内容相同：",
    "Its source lines are those of DeepSpeed {v}; the page's script shows each release's own.":
        "源码行号为 DeepSpeed {v} 的行号；页面脚本会显示各版本自己的行号。",
    "Batch size and accumulation": "批大小与梯度累积",
    "Precision (fp16 / bf16)": "精度（fp16 / bf16）",
    "Optimizer": "优化器",
    "Scheduler": "学习率调度器",
    "ZeRO (and its NVMe I/O)": "ZeRO（及其 NVMe I/O）",
    "Activation checkpointing": "激活检查点",
    "Communication and data": "通信与数据",
    "Misc and debug": "杂项与调试",
    "Monitoring and profiling": "监控与性能分析",
    "Autotuning": "自动调优",
    "Checkpointing": "检查点",
    "Compile": "编译",
    "Parallelism (tensor, expert, pipeline, hybrid engine)": "并行（张量、专家、流水线、混合引擎）",
    "Quantization, compression and sparsity": "量化、压缩与稀疏",
    "Our explanation": "说明",
}


# ---------------------------------------------------------------- what assets/dsfields.js writes (issue 24)

SCRIPT_STRINGS: tuple[str, ...] = (
    "DeepSpeed release", "does not exist in DeepSpeed {v}", "see its history across releases",
    "Fields of DeepSpeed {v}", "Did you mean", "No matching field",
    "Key", "Release", "Change", "top level", "{n} keys changed from {a} to {b}.",
    "{n} keys", "released", "newest", "original",
    # dsfields.diff's change kinds (ChangeKind values), which the pair picker lists
    "Field was added", "Field was removed", "Field was renamed", "Default value was changed", "Type was changed",
    "Constraint was changed", "Field was deprecated", "Field was un-deprecated",
    "Field was removed and is now rejected",
    "Unknown-key handling of the section was changed", "Description was changed",
)
"""Every sentence the site's script writes; ``releases/site-data.json`` carries them in the page's language."""

ZH.update({
    "DeepSpeed release": "DeepSpeed 版本",
    "does not exist in DeepSpeed {v}": "在 DeepSpeed {v} 中不存在",
    "see its history across releases": "查看它在各版本中的历史",
    "Fields of DeepSpeed {v}": "DeepSpeed {v} 中的字段",
    "Did you mean": "你是不是要找",
    "No matching field": "没有匹配的字段",
    "Key": "键",
    "Release": "版本",
    "Change": "变更",
    "top level": "顶层",
    "{n} keys changed from {a} to {b}.": "从 {a} 到 {b} 共有 {n} 个键发生变更。",
    "{n} keys": "{n} 个键",
    "newest": "最新",
    "original": "原文",
    "Field was added": "新增字段",
    "Field was removed": "字段被移除",
    "Field was renamed": "字段被改名",
    "Default value was changed": "默认值变更",
    "Type was changed": "类型变更",
    "Constraint was changed": "约束变更",
    "Field was deprecated": "字段被弃用",
    "Field was un-deprecated": "字段不再弃用",
    "Field was removed and is now rejected": "字段被移除，现在会被拒绝",
    "Unknown-key handling of the section was changed": "该节对未知键的处理方式变更",
    "Description was changed": "说明变更",
})

ZH.update({
    # Sentences and headings of the templates (issue 24: a Chinese page is Chinese outside code).
    "none (absent means not set)": "无（缺省即不设置）",
    "required (no default)": "必填（无默认值）",
    "kept as string": "原样保留字符串",
    "→ default": "→ 默认值",
    "error": "报错",
    "the value is converted": "值会转换",
    "No keys of its own.": "本节没有自己的键。",
    "matched case-insensitively": "不区分大小写匹配",
    "This is the oldest snapshotted release: there is nothing to compare it with.":
        "这是最早的快照版本，没有可比较的上一版本。",
    "Nothing changed in `ds_config.json` since {v} ([its overview]({link})).":
        "自 {v} 以来 `ds_config.json` 没有变化（[它的概览]({link})）。",
    "{n} changes since [{v}]({link}), by section (`dsfields diff {v} {w}` prints the same).":
        "自 [{v}]({link}) 以来共 {n} 处变更，按节列出（`dsfields diff {v} {w}` 输出相同内容）。",
    ("Keys at the top of `ds_config.json` that hold a value rather than a section, by group. Sections have pages "
     "of their own ([overview]({link}))."):
        "`ds_config.json` 顶层中取值而非节的键，按分组列出。各节有自己的页面（[概览]({link})）。",
    "{n} keys in {m} sections, extracted from DeepSpeed {v} itself (`{by}`).":
        "{m} 个节中共 {n} 个键，直接从 DeepSpeed {v} 本身提取（`{by}`）。",
    "{n} keys are [rejected with a message]({link}).": "{n} 个键会被[带消息拒绝]({link})。",
    ("DeepSpeed's official configuration page at v{v} is not compared with the code here: no copy of that tag's "
     "page could be fetched when this site was built."):
        "此处未把 DeepSpeed 在 v{v} 的官方配置文档与代码对照：构建本站时无法取得该标签下的文档页面。",
    ("Every release has its full dictionary (one page per section), default tables, enums, deprecated and removed "
     "keys, optimizer and scheduler catalogues, templates A/B/C, typo handling and changes. The release selector at "
     "the top of every page switches release and stays on the same field. Dates are the PyPI upload of each "
     "release's sdist (`generated/releases.json`)."):
        ("每个版本都有完整的字典（每节一页）、默认值表、枚举、弃用与移除的键、优化器与调度器目录、模板 A/B/C、"
         "拼写错误处理和变更。每页顶部的版本选择器切换版本时停留在同一字段。日期是各版本 sdist 上传到 PyPI 的时间"
         "（`generated/releases.json`）。"),
    "Sections": "节数",
    "Strict sections": "严格校验的节",
    "Changes from the previous snapshot": "相对上一快照的变更",
    "DeepSpeed versions": "DeepSpeed 各版本",
    ("The dictionary keeps the hand-written one's eight groups and adds one per kind of section it left out. A "
     "key's group is decided by its top-level key alone (`zero_optimization.offload_param.device` → ZeRO), by this "
     "table: exact keys first, then the patterns in table order. A top-level key no rule matches goes to misc and "
     "is listed below, never dropped. The table lives in `dsfields/docs/groups.py`."):
        ("本字典沿用手写文档的八个分组，并为它遗漏的每类节各加一组。键的分组只由它的顶层键决定"
         "（`zero_optimization.offload_param.device` → ZeRO），依据下表：先匹配精确键，再按表中顺序匹配模式。"
         "没有规则匹配的顶层键归入杂项并列在下方，绝不丢弃。此表位于 `dsfields/docs/groups.py`。"),
    "Group": "分组",
    "Top-level keys and patterns": "顶层键与模式",
    "Unmapped keys": "未归组的键",
    "None: every top-level key of every snapshotted release matches a rule.":
        "没有：每个快照版本的每个顶层键都有规则匹配。",
    "Member": "成员",
    "Used by": "使用者",
    "No enums in this release's snapshot.": "本版本的快照中没有枚举。",
    "History": "历史",
    ("Each key's events across the {n} snapshotted releases ({a} to {b}): when it appeared, changed default or "
     "type, was deprecated, removed or rejected."):
        "每个键在 {n} 个快照版本（{a} 至 {b}）中的事件：何时出现、默认值或类型何时变化、何时弃用、移除或开始拒绝。",
    ("Pick two releases: every change `dsfields diff` reports between consecutive releases in that span is listed "
     "by key, oldest first (`dsfields diff A B` compares the two snapshots directly)."):
        "选两个版本：区间内相邻版本之间 `dsfields diff` 报告的每处变更按键列出，最早的在前"
        "（`dsfields diff A B` 直接比较两个快照）。",
    "From": "从",
    "Each release's own page lists its changes from the previous one": "每个版本自己的页面列出它相对上一版本的变更",
    "to": "到",
    ("Keys each release added (or brought back) compared with the previous snapshotted one, newest release first, "
     "with the release's date (PyPI upload of its sdist). Pick a date to keep only the releases from that day on. "
     "Keys of the oldest snapshot ({v}) are not listed: what happened before it is unknown. `dsfields lookup KEY "
     "--history` answers for one key."):
        ("各版本相对上一快照新增（或恢复）的键，最新版本在前，并附版本日期（sdist 上传到 PyPI 的时间）。选一个日期"
         "只保留当天及之后的版本。最早快照（{v}）的键不列出：此前发生了什么无从得知。单个键可用 "
         "`dsfields lookup KEY --history` 查询。"),
    "Only one release is snapshotted so far: nothing to compare.": "目前只有一个快照版本，无可比较。",
    "This release's snapshot has no optimizer or scheduler catalogue.": "本版本的快照没有优化器或调度器目录。",
    "what changed": "变更",
    "default values": "默认值",
    "deprecated and removed keys": "弃用与移除的键",
    "enums": "枚举",
    "config fields": "配置字段",
    "templates A/B/C": "模板 A/B/C",
    "typos and errors": "拼写错误与报错",
    ("What DeepSpeed uses when a key is absent (and not `\"auto\"`), for every pydantic model and dict section, "
     "straight from the source at tag `v{v}`."):
        ("键缺省（且不是 `\"auto\"`）时 DeepSpeed 使用的值，覆盖每个 pydantic 模型和 dict 节，"
         "直接取自标签 `v{v}` 的源码。"),
    "model": "模型",
    "dict": "dict",
    "unknown keys": "未知键",
    "Corrected": "已更正",
    ".": "。",
    "In {v} {key} rejects unknown keys, so the version with the key nested there fails with a validation error.":
        "在 {v} 中 {key} 拒绝未知键，所以把该键嵌套在里面的版本会报校验错误。",
    ("In {v} {key} ignores unknown keys, so the version with the key nested there silently leaves the I/O settings "
     "at their defaults."):
        "在 {v} 中 {key} 忽略未知键，所以把该键嵌套在里面的版本会静默地让 I/O 设置保持默认值。",
    # The seed's templates (docs/examples/*.json): our titles and notes of them.
    "Small-model SFT (up to 13B, 8 GPUs, enough GPU memory): ZeRO-2": "小模型 SFT（13B 以下、8 卡、显存充足）：ZeRO-2",
    "70B full fine-tuning on 8 GPUs: ZeRO-3 with CPU offload": "8 卡 70B 全参微调：ZeRO-3 + CPU 卸载（offload）",
    "ZeRO-Infinity: ZeRO-3 with NVMe offload": "ZeRO-Infinity：ZeRO-3 + NVMe 卸载（offload）",
    ("Shared versions of this config nest the aio block inside zero_optimization, but DeepSpeed reads aio as a "
     "top-level section"):
        "流传的版本把 aio 块嵌套在 zero_optimization 里，但 DeepSpeed 把 aio 当作顶层节读取",
})

SEARCH_TERMS: dict[str, dict[str, str]] = {
    "zh": {
        # The words Chinese DeepSpeed material uses for what the keys name (the seed documents write 卸载,
        # 损失缩放, 预取): a reader types these, the keys and often our pages say the English word.
        "卸载": "offload", "损失缩放": "loss scale", "预取": "prefetch", "归约": "reduce", "规约": "reduce",
        "梯度累积": "gradient accumulation", "梯度累加": "gradient accumulation", "显存": "memory", "内存": "memory",
        "分片": "partition", "分区": "partition", "梯度裁剪": "gradient clipping", "梯度": "gradient",
        "优化器": "optimizer", "调度器": "scheduler", "检查点": "checkpoint", "桶": "bucket", "通信": "comm",
        "重叠": "overlap", "激活": "activation", "参数": "param", "预热": "warmup", "学习率": "lr",
        "流水线": "pipeline", "量化": "quantize", "稀疏": "sparse", "剪枝": "pruning",
    },
}
"""Per language, a term readers type → the English words of the keys it means (the field finder and the
Chinese full-text index both use it)."""


def script_words(lang: str) -> dict[str, str]:
    """:data:`SCRIPT_STRINGS` in ``lang`` (English: none, the script's own text is English)."""
    _ = translator(lang)
    return {text: _(text) for text in SCRIPT_STRINGS if _(text) != text}


def translator(lang: str) -> Callable[[str], str]:
    """``_`` for the templates of ``lang``: the Chinese text where there is one, else the English."""
    if lang == "zh":
        return lambda text: ZH.get(text, text)
    return lambda text: text


# The details dsfields.diff writes for a change (its own words, with values and key names in them): each
# shape it writes, in Chinese. DeepSpeed's own messages inside a detail are not translated (views.py
# marks them 原文); a shape missing here stays English.
_FATES_ZH = {
    "silently ignored": "被静默忽略",
    "ignored (its section is not read either)": "被忽略（它所在的节也不再读取）",
    "rejected as an unknown key": "作为未知键被拒绝",
    "passed on but unused": "被透传但不使用",
}
_UNKNOWN_KEYS_ZH = {"ignored": "静默忽略", "passed": "整体透传", "error": "报错", "kept": "保留"}
_NOTES_ZH = {
    " (dict reader → pydantic model; a typo that was silently ignored now raises)":
        "（dict 读取 → pydantic 模型；以前被静默忽略的拼错现在会报错）",
    " (a typo that was silently ignored now raises)": "（以前被静默忽略的拼错现在会报错）",
    " (a typo is no longer reported)": "（拼错不再被报告）",
    "": "",
}
_DETAILS_ZH: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (re.compile(r"default (.+)", re.S), lambda m: f"默认值 {m[1]}"),
    (re.compile(r"new section"), lambda m: "新的节"),
    (re.compile(r"rejected with its section (.+)"), lambda m: f"随所在的节 {m[1]} 一起被拒绝"),
    (re.compile(r"no longer read; a value here is now (.+)"),
     lambda m: f"不再读取；此处的值现在{_FATES_ZH[m[1]]}" if m[1] in _FATES_ZH else None),
    (re.compile(r"no longer rejected with a message; a value here is now (.+)"),
     lambda m: f"不再报错拒绝；此处的值现在{_FATES_ZH[m[1]]}" if m[1] in _FATES_ZH else None),
    (re.compile(r"unknown keys: (\w+) → (\w+)(.*)"),
     lambda m: f"未知键：{_UNKNOWN_KEYS_ZH.get(m[1], m[1])} → {_UNKNOWN_KEYS_ZH.get(m[2], m[2])}{_NOTES_ZH[m[3]]}"
     if m[3] in _NOTES_ZH else None),
    (re.compile(r"JSON types (.+)"), lambda m: f"JSON 类型 {m[1]}"),
    (re.compile(r"effective default same values, now decided by a validator"),
     lambda m: "实际默认值：取值不变，改由校验器决定"),
    (re.compile(r"effective default (.+)"), lambda m: f"实际默认值 {m[1]}"),
    (re.compile(r"use (\S+) instead \(legacy spelling: DeepSpeed reads (\S+) only when (\S+) is absent, "
                r"into the same (\S+)\)"),
     lambda m: f"请改用 {m[1]}（旧写法：只有 {m[3]} 不存在时 DeepSpeed 才读取 {m[2]}，读入同一个 {m[4]}）"),
    (re.compile(r"use (\S+) instead"), lambda m: f"请改用 {m[1]}"),
    (re.compile(r"no longer deprecated"), lambda m: "不再弃用"),
    (re.compile(r"description text changed"), lambda m: "说明文字有变"),
)
WAS_NOT_READ = " (was not read before)"
"""What dsfields.diff appends to DeepSpeed's message for a key that is rejected and was not read before."""


def change_detail(text: str, lang: str) -> str:
    """A change detail dsfields.diff wrote, in ``lang`` (values, types and key names stay as they are)."""
    if lang != "zh" or not text:
        return text
    if text == WAS_NOT_READ.strip():
        return "之前未读取"
    for pattern, say in _DETAILS_ZH:
        match = pattern.fullmatch(text)
        if match is not None:
            said = say(match)
            if said is not None:
                return said
    return text
