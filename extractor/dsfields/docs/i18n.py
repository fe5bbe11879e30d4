"""The site's own words in each language: English is the key, Chinese its translation (``_`` in templates).

DeepSpeed's docstrings and messages stay as DeepSpeed wrote them (quoted); our explanations come
from ``dsfields/prose``. What is left are the labels and sentences of the templates, listed here so
the Chinese site says them in Chinese; a string without a translation falls back to English.
"""

from __future__ import annotations

from collections.abc import Callable

LANGUAGES = ("en", "zh")

ZH: dict[str, str] = {
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
