"""The site's own words in each language: English is the key, Chinese its translation (``_`` in templates).

DeepSpeed's docstrings and messages stay as DeepSpeed wrote them (quoted); our explanations come
from ``dsfields/prose``. What is left are the labels and sentences of the templates, listed here so
the Chinese site says them in Chinese; a string without a translation falls back to English.
"""

from __future__ import annotations

from collections.abc import Callable

LANGUAGES = ("en", "zh")

ZH: dict[str, str] = {
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
    ("A misspelled key is only reported where DeepSpeed validates the section with a strict pydantic model\n"
     "(`extra=\"forbid\"`). Everywhere else the key is read with `dict.get`, so a typo silently leaves the\n"
     "default in place. Check a config against this release instead of grepping the source:\n"
     "`dsfields check ds_config.json --version {v}`."):
        ("只有 DeepSpeed 用严格的 pydantic 模型（`extra=\"forbid\"`）校验的节才会报告拼错的键。\n"
         "其他地方都用 `dict.get` 读取，拼错的键会被静默忽略，默认值照旧生效。与其翻源码，不如直接用本版本检查配置：\n"
         "`dsfields check ds_config.json --version {v}`。"),
    "{n} of {m} sections reject unknown keys.": "{m} 个节中有 {n} 个拒绝未知键。",
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
