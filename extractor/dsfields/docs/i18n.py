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
    "Official docs vs code": "官方文档与代码对照",
    "official docs vs code": "官方文档与代码对照",
    ("DeepSpeed's own configuration page (`{file}` at `{ref}`) states a default for {n} keys that this release's "
     "snapshot has; for {k} of them DeepSpeed's code uses another value. The code is what runs: the value below "
     "comes from the source line named, read from the release itself."):
        ("DeepSpeed 自己的配置文档（`{ref}` 的 `{file}`）为本版本快照中的 {n} 个键写明了默认值；"
         "其中 {k} 个与 DeepSpeed 代码实际使用的值不同。"
         "实际运行的是代码：下表的值来自所列源码行，直接读自该版本本身。"),
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
    "Memory estimate": "内存估算",
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


def translator(lang: str) -> Callable[[str], str]:
    """``_`` for the templates of ``lang``: the Chinese text where there is one, else the English."""
    if lang == "zh":
        return lambda text: ZH.get(text, text)
    return lambda text: text
