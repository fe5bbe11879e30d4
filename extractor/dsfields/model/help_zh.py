"""``dsfields --help`` in Chinese: each help string of the command line (keyed by its English, so a reworded
option fails ``tests/test_zh_every_command.py`` until its Chinese follows) and argparse's own words.

``dsfields.cli`` applies it when ``--lang zh`` is given or the locale is Chinese. Only the standard library.
"""

from __future__ import annotations

ARGPARSE_ZH = {
    "usage: ": "用法：",
    "positional arguments": "位置参数",
    "options": "选项",
    "show this help message and exit": "显示此帮助并退出",
    "show program's version number and exit": "显示程序的版本号并退出",
}
"""argparse's own words (its gettext strings) in Chinese."""

HELP_ZH: dict[str, str] = {
    # dsfields
    "The source-derived dictionary of every DeepSpeed config field.": "从源码提取的 DeepSpeed 全部配置字段词典。",
    "log progress and details to stderr": "把进度和细节记录到 stderr",
    # the subcommands' one-line help (cli.COMMANDS)
    "extract the installed DeepSpeed's config fields into a snapshot": "把已安装 DeepSpeed 的配置字段提取成快照",
    "extract other DeepSpeed releases, each in its own runtime": "提取其他 DeepSpeed 版本，每个版本在自己的运行环境中",
    "what a config field is: default, type, auto, deprecation, source":
        "查询配置字段：默认值、类型、auto、弃用、源码位置；也可查优化器/调度器类型和目标（显存、通信……）",
    "what changed in ds_config.json between two DeepSpeed versions": "两个 DeepSpeed 版本之间 ds_config.json 的变化",
    "serve the commands as MCP tools over stdio, for coding agents (read-only)":
        "把这些命令作为 MCP 工具通过 stdio 提供给编程智能体（只读）",
    "find what DeepSpeed would reject, ignore or misread in ds_config files":
        "找出 ds_config 文件中会被 DeepSpeed 拒绝、忽略或误读的内容",
    "every key DeepSpeed will read for a config: its value and where it comes from":
        "DeepSpeed 会为一个配置读取的每个键：取值及其来源",
    "rewrite a config for another DeepSpeed release: renames, conversions, removals":
        "把配置改写为另一个 DeepSpeed 版本的写法：改名、转换、删除",
    "what upgrading DeepSpeed from U to V changes for one config file":
        "把 DeepSpeed 从 U 升级到 V 对一个配置文件意味着什么",
    "write the JSON Schema (Draft 2020-12) of ds_config for one DeepSpeed version":
        "输出某个 DeepSpeed 版本的 ds_config JSON Schema（Draft 2020-12）",
    "render the field dictionary of every snapshot and build (or serve) the site":
        "渲染每个快照的字段词典并构建（或本地预览）文档站点",
    # issue 38: dsfields explain
    "compare the message catalogues instead (generated/<V>/messages.json): the errors, asserts and warnings each "
    "release added or removed, with their IDs":
        "改为比较消息目录（generated/<V>/messages.json）：每个版本新增或删除的报错、断言和警告，附带编号",
    "from a pasted error, warning or symptom to the key at fault and the fix":
        "从粘贴的报错、警告或现象找到出错的键和修正方法",
    "the pasted message, a message ID, or - for stdin": "粘贴的消息、消息编号，或用 - 从标准输入读取",
    "the DeepSpeed release you ran": "你运行的 DeepSpeed 版本",
    "transformers (and accelerate) releases you ran": "你运行的 transformers（和 accelerate）版本",
    "your ds_config file, to rank its keys first": "你的 ds_config 文件，其中写了的键排在前面",
    "your ds_config file: its keys rank first, and the fixed file is computed and checked":
        "你的 ds_config 文件：其中写了的键排在前面，并算出修正后的文件、用 check 检查它",
    "with --config: write the fixed file there (safe write)": "配合 --config：把修正后的文件写到这里（安全写入）",
    "with --fix-out: also write a read-only or hard-linked OUT (a hard-linked one in place)":
        "配合 --fix-out：只读或有硬链接的 OUT 也写入（有硬链接的就地改写）",
    "with --config: the world size the run had (else the one the message printed, else 1)":
        "配合 --config：运行时的进程总数（world size；不给时取消息中打印的值，再不然为 1）",
    "language of our explanations": "说明文字的语言",
    "output format": "输出格式",
    "GPU and host memory a config needs for N parameters, and its OOM list":
        "一个配置在 N 个参数下需要的显存和主机内存，以及它的 OOM 清单",
    # extract
    "root of the snapshot tree (default: generated/)": "快照目录的根（默认：generated/）",
    "print no summary": "不打印摘要",
    "also run the launch witness: deepspeed.initialize on CPU over tracing dicts (every launch rule's example configs, "
    "~10 s once DeepSpeed's CPU ops are built); fields it saw read get the 'launch' witness":
        "同时运行启动见证：在 CPU 上用追踪字典调用 deepspeed.initialize（每条启动规则的示例配置；DeepSpeed 的 CPU 算子"
        "编译好之后约 10 秒）；被它读到的字段获得 'launch' 见证",
    "also confirm the launch rules with deepspeed.initialize on CPU and write launch.json":
        "同时在 CPU 上用 deepspeed.initialize 确认启动规则，并写出 launch.json",
    "write only the inference document (DeepSpeedInferenceConfig) to <out>/<version>/inference.json; imports "
    "deepspeed.inference.config only":
        "只把推理配置文档（DeepSpeedInferenceConfig）写到 <out>/<version>/inference.json；"
        "只导入 deepspeed.inference.config",
    "also run the differential checks (explicit default, liveness) and write verification.json":
        "同时运行差分检查（显式默认值、是否真被读取），并写出 verification.json",
    # snapshot
    "DeepSpeed releases to snapshot": "要做快照的 DeepSpeed 版本",
    "every PyPI release from --since on": "从 --since 起 PyPI 上的每个版本",
    "oldest release for --all (default: 0.8.0)": "--all 的最早版本（默认：0.8.0）",
    "releases extracted in parallel (default: 2)": "并行提取的版本数（默认：2）",
    "re-extract even up-to-date snapshots": "即使快照已是最新也重新提取",
    "every witness: also run the launch witness and confirm the launch rules (deepspeed.initialize on CPU in each "
    "release's runtime; writes launch.json)":
        "全部见证：同时运行启动见证并确认启动规则（在每个版本的运行环境中于 CPU 上调用 deepspeed.initialize；"
        "写出 launch.json）",
    # lookup
    "a JSON key (stage3_max_live_parameters), python name (max_live_parameters), dotted path "
    "(zero_optimization.offload_param.device), section (zero_optimization), optimizer or scheduler type "
    "(optimizer:AdamW, WarmupDecayLR) or goal (memory, OOM, speed, 显存)":
        "JSON 键（stage3_max_live_parameters）、Python 名称（max_live_parameters）、点分路径"
        "（zero_optimization.offload_param.device）、配置段（zero_optimization）、优化器或调度器类型"
        "（optimizer:AdamW、WarmupDecayLR）或目标（显存、内存、通信、卸载、速度、OOM）",
    "DeepSpeed version of the snapshot to answer from (default: the installed DeepSpeed's if snapshotted, else the "
    "newest)":
        "用哪个 DeepSpeed 版本的快照回答（默认：已安装的版本，若有其快照；否则最新版本）",
    "print the snapshot records as JSON": "以 JSON 打印快照记录",
    "also show in which releases the field changed": "同时列出该字段在哪些版本中变化过",
    "language of our explanations: en or zh (default: zh when LANG is a zh locale, else en)":
        "说明文字的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en）",
    "answer from the inference config (DeepSpeedInferenceConfig, what deepspeed.init_inference takes) instead of "
    "ds_config":
        "改为查询推理配置（DeepSpeedInferenceConfig，即 deepspeed.init_inference 接受的配置），而不是 ds_config",
    # diff
    "a snapshotted DeepSpeed version, or 'installed'": "一个有快照的 DeepSpeed 版本，或 'installed'",
    "output format (default: text, grouped by section)": "输出格式（默认：text，按配置段分组）",
    "show only these kinds (added, removed, renamed, defaults, types, constraints, deprecated, undeprecated, "
    "became-removed, strictness, descriptions)":
        "只显示这些变化类型（added, removed, renamed, defaults, types, constraints, deprecated, undeprecated, "
        "became-removed, strictness, descriptions）",
    "also report changed descriptions": "同时报告说明文字的变化",
    "compare the init_inference config (DeepSpeedInferenceConfig) instead of ds_config":
        "改为比较 init_inference 配置（DeepSpeedInferenceConfig），而不是 ds_config",
    "exit 1 when a change of these kinds exists (for CI)": "存在这些类型的变化时以 1 退出（用于 CI）",
    "snapshot tree to read (default: $DSFIELDS_GENERATED, else generated/)":
        "要读取的快照目录（默认：$DSFIELDS_GENERATED，否则 generated/）",
    "en or zh for text and markdown (default: zh when LANG is a zh locale, else en)":
        "text 与 markdown 输出的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en）",
    # check
    "ds_config files (JSON or hjson), or accelerate YAML configs":
        "ds_config 文件（JSON 或 hjson），或 accelerate 的 YAML 配置",
    "DeepSpeed version to check against (default: the installed one if snapshotted, else the newest snapshot)":
        "按哪个 DeepSpeed 版本检查（默认：已安装的版本，若有其快照；否则最新快照）",
    "the file is for the HF Trainer: the \"auto\" values it fills are fine":
        "文件交给 HF Trainer 使用：它会填写的 \"auto\" 值没有问题",
    "number of ranks the job runs on: train_batch_size exactly, the rules that depend on it, and with --launch the "
    "launch as rank 0 and rank N-1 of N (torch's fake process group)":
        "作业运行的 rank 数：据此精确检查 train_batch_size 和依赖它的规则；配合 --launch 时以 N 个 rank 中的 rank 0 和 "
        "rank N-1 启动（torch 的 fake 进程组）",
    "with --world-size: ranks per node (default: all N on one node)":
        "配合 --world-size：每个节点的 rank 数（默认：N 个都在一个节点上）",
    "exit 1 on warnings too": "有警告时也以 1 退出",
    "also build DeepSpeedConfig (needs that DeepSpeed version installed)":
        "同时构建 DeepSpeedConfig（需要安装该 DeepSpeed 版本）",
    "plain code passes an optimizer to deepspeed.initialize (changes which launch rules apply; --hf implies the "
    "Trainer's own choice)":
        "普通代码会把优化器传给 deepspeed.initialize（影响哪些启动规则适用；--hf 时按 Trainer 自己的选择）",
    "also run deepspeed.initialize on CPU in a subprocess (needs that DeepSpeed installed)":
        "同时在子进程中于 CPU 上运行 deepspeed.initialize（需要安装该 DeepSpeed）",
    "the files are init_inference configs (DeepSpeedInferenceConfig), not ds_config":
        "这些文件是 init_inference 配置（DeepSpeedInferenceConfig），不是 ds_config",
    "skip files that do not look like a DeepSpeed config (fewer than two of its top-level keys, or one of its "
    "sections); what the pre-commit hook passes for every .json/.hjson":
        "跳过不像 DeepSpeed 配置的文件（顶层键少于两个，且没有它的配置段）；"
        "pre-commit 钩子对每个 .json/.hjson 都这样传入",
    "the HF Trainer's own flags, as HfArgumentParser takes them, one quoted string (write --trainer-args=\"--bf16 "
    "...\" when it starts with a single flag); implies --hf":
        "HF Trainer 自己的命令行参数，按 HfArgumentParser 的写法放在一个带引号的字符串里（以单个参数开头时写成 "
        "--trainer-args=\"--bf16 ...\"）；隐含 --hf",
    "the model's config.json (its hidden_size fills the ZeRO bucket sizes)":
        "模型的 config.json（其 hidden_size 用于填写 ZeRO 的桶大小）",
    "the model's hidden size": "模型的隐藏层大小",
    "training examples, for num_training_steps when --max_steps is not given":
        "训练样本数，未给 --max_steps 时用于计算 num_training_steps",
    "accelerate's YAML config (accelerate launch --config_file): mixed_precision and its deepspeed_config settings":
        "accelerate 的 YAML 配置（accelerate launch --config_file）：其中的 mixed_precision 与 deepspeed_config 设置",
    "the transformers (and accelerate) releases whose flags and rules to follow (default: the installed ones if "
    "snapshotted, else the newest transformers and its accelerate)":
        "按哪个 transformers（及 accelerate）版本的参数与规则判断（默认：已安装的版本，若有其快照；"
        "否则最新的 transformers 及与之配对的 accelerate）",
    "the transformers (and accelerate) releases whose flags and rules to follow":
        "按哪个 transformers（及 accelerate）版本的参数与规则判断",
    "the HF Trainer's flags (as for check): the config as the Trainer hands it to DeepSpeed "
    "(--per_device_train_batch_size as micro batch, --bf16/--fp16, --gradient_checkpointing)":
        "HF Trainer 的命令行参数（同 check）：按 Trainer 交给 DeepSpeed 的配置估算"
        "（--per_device_train_batch_size 作为微批大小，--bf16/--fp16，--gradient_checkpointing）",
    "OLD and NEW are HF releases T[,A] (transformers, accelerate): the Trainer's flags and "
    "the Trainer's and accelerate's rules that changed (generated/hf/)":
        "OLD 与 NEW 是 HF 版本 T[,A]（transformers、accelerate）：比较 Trainer 的参数，以及 Trainer 与 "
        "accelerate 规则的变化（generated/hf/）",
    "en or zh for the text report (default: zh when LANG is a zh locale, else en)":
        "文本报告的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en）",
    # resolve
    "a ds_config file (JSON or hjson)": "一个 ds_config 文件（JSON 或 hjson）",
    "DeepSpeed version (default: the installed one if snapshotted, else the newest)":
        "DeepSpeed 版本（默认：已安装的版本，若有其快照；否则最新版本）",
    "the file is for the HF Trainer: name the argument that fills each \"auto\"":
        "文件交给 HF Trainer 使用：指出填写每个 \"auto\" 的参数",
    "data-parallel ranks, for the batch-size arithmetic (default 1)": "数据并行的 rank 数，用于批大小计算（默认 1）",
    "only the ZeRO keys that matter at the config's ZeRO stage": "只列出在该配置的 ZeRO 阶段起作用的 ZeRO 键",
    "only this key or section (repeatable), e.g. --only zero_optimization":
        "只列出这个键或配置段（可重复），例如 --only zero_optimization",
    "en or zh for text (default: zh when LANG is a zh locale, else en; json stays English)":
        "文本输出的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en；json 保持英文）",
    "the file is an init_inference config (DeepSpeedInferenceConfig), not ds_config":
        "该文件是 init_inference 配置（DeepSpeedInferenceConfig），不是 ds_config",
    # migrate
    "the DeepSpeed release to migrate to": "迁移到的 DeepSpeed 版本",
    "the DeepSpeed release the file was written for (default: guessed from keys only some releases read; exit 2 if "
    "they do not tell)":
        "文件原本适用的 DeepSpeed 版本（默认：根据只有部分版本读取的键推断；推断不出时以 2 退出）",
    "write U's value for every key the file does not set whose default changed (default)":
        "对文件未设置而默认值变了的每个键，写入 U 的值（默认）",
    "take V's defaults; every value that changes is still listed": "采用 V 的默认值；每个会变化的值仍会列出",
    "the file is for the HF Trainer: an \"auto\" it fills is not a value change; with --trainer-args, every literal the"
    " Trainer refuses (its mismatch list) is set to \"auto\", as transformers advises":
        "文件交给 HF Trainer 使用：它会填写的 \"auto\" 不算值的变化；配合 --trainer-args 时，Trainer 拒绝的每个字面值"
        "（它的不匹配清单）都按 transformers 的建议改为 \"auto\"",
    "exit 1 when something cannot be carried (a removed feature, an optimizer V lacks, a behaviour that could not be "
    "pinned)":
        "有内容无法迁移时以 1 退出（已移除的功能、V 没有的优化器、无法固定的行为）",
    "write the migrated config here": "把迁移后的配置写到这里",
    "rewrite FILE (atomically, keeping its line endings, mode and owner; a symlink's target is rewritten)":
        "改写 FILE 本身（原子写入，保留换行符、权限和属主；符号链接改写其目标）",
    "also write a read-only or hard-linked target (a hard-linked one in place)":
        "也写入只读或有硬链接的目标（硬链接的原地写）",
    "print a unified diff of the changes": "以 unified diff 打印改动",
    "also delete keys the release ignores (default: report them)": "同时删除该版本会忽略的键（默认：只报告）",
    "data-parallel ranks": "数据并行的 rank 数",
    "en or zh for the report (default: zh when LANG is a zh locale, else en)":
        "报告的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en）",
    # upgrade
    "the DeepSpeed release the file was written for (default: guessed from its keys)":
        "文件原本适用的 DeepSpeed 版本（默认：根据其中的键推断）",
    "the DeepSpeed release to upgrade to": "升级到的 DeepSpeed 版本",
    "when the file was written (YYYY, YYYY-MM or YYYY-MM-DD): --from is the newest release published by then "
    "(generated/releases.json)":
        "文件写成的时间（YYYY、YYYY-MM 或 YYYY-MM-DD）：--from 取当时已发布的最新版本（generated/releases.json）",
    "the file is for the HF Trainer: its \"auto\" values are the Trainer's in both releases":
        "文件交给 HF Trainer 使用：两个版本中它的 \"auto\" 值都由 Trainer 填写",
    "report language (default: zh under a zh_* LANG, else en)": "报告的语言（默认：LANG 为 zh_* 时为 zh，否则为 en）",
    # schema
    "DeepSpeed version (default: installed if snapshotted, else newest)":
        "DeepSpeed 版本（默认：已安装的版本，若有其快照；否则最新版本）",
    "write here (atomically) instead of stdout, e.g. generated/<version>/ds_config.schema.json":
        "写到这里（原子写入）而不是 stdout，例如 generated/<version>/ds_config.schema.json",
    "with -o: also write a read-only or hard-linked target (a hard-linked one in place)":
        "配合 -o：也写入只读或有硬链接的目标（硬链接的原地写）",
    "also reject unknown keys where DeepSpeed silently ignores them": "在 DeepSpeed 静默忽略未知键的地方也拒绝它们",
    "language of the descriptions: en or zh (default: zh when LANG is a zh locale)":
        "说明文字的语言：en 或 zh（默认：LANG 为中文区域设置时为 zh）",
    "for configs given to the HF Trainer: also accept \"auto\" where the Trainer fills it":
        "用于交给 HF Trainer 的配置：在 Trainer 会填写的地方也接受 \"auto\"",
    "the schema of the init_inference config (DeepSpeedInferenceConfig) instead of ds_config":
        "输出 init_inference 配置（DeepSpeedInferenceConfig）的 schema，而不是 ds_config 的",
    "the published docs site: gives the schema its $id and each field a Docs: link (default: none, so no links)":
        "已发布的文档站点：用于 schema 的 $id 和每个字段的 Docs: 链接（默认：无，因此没有链接）",
    # docs
    "render the pages and build the site with mkdocs --strict": "渲染页面并用 mkdocs --strict 构建站点",
    "render the pages and serve the site locally (mkdocs serve)": "渲染页面并在本地预览站点（mkdocs serve）",
    "Render every snapshot into docs/<version>/ and docs/releases/, then build the site with mkdocs --strict.":
        "把每个快照渲染到 docs/<version>/ 和 docs/releases/，再用 mkdocs --strict 构建站点。",
    "Render every snapshot into docs/<version>/ and docs/releases/, then serve it (mkdocs serve).":
        "把每个快照渲染到 docs/<version>/ 和 docs/releases/，再在本地预览（mkdocs serve）。",
    "mkdocs.yml (default: the checkout's, found from the current folder upwards)":
        "mkdocs.yml（默认：从当前目录向上找到的检出目录中的那个）",
    "snapshot folder (default: $DSFIELDS_GENERATED or the checkout's generated/)":
        "快照目录（默认：$DSFIELDS_GENERATED，或检出目录中的 generated/）",
    "output folder (default: site/ next to mkdocs.yml; in an installed dsfields without a checkout, site/ in the "
    "current folder)":
        "输出目录（默认：mkdocs.yml 旁的 site/；在没有检出目录的已安装 dsfields 中，为当前目录下的 site/）",
    "only render the Markdown pages": "只渲染 Markdown 页面",
    "rebuild only this release's pages (both languages) into the existing site (after a full build; see README "
    "\"Docs site\")":
        "只把这个版本的页面（两种语言）重建到现有站点中（需先完整构建一次；见 README 的 \"Docs site\"）",
    "address to serve on (default: %(default)s)": "预览服务的地址（默认：%(default)s）",
    # estimate
    "total model parameters (7e9, 7B, 1.3B, 350M)": "模型总参数量（7e9、7B、1.3B、350M）",
    "parameters of the largest layer (ZeRO-3 gathers one at a time; default 4·H² from --hidden-size)":
        "最大一层的参数量（ZeRO-3 一次收集一层；默认按 --hidden-size 取 4·H²）",
    "GPUs (ranks) per node (default: inferred from the config's batch sizes, else 1)":
        "每个节点的 GPU（rank）数（默认：由配置的批大小推断，否则为 1）",
    "nodes (default: inferred with --gpus-per-node)": "节点数（默认：与 --gpus-per-node 一起推断）",
    "memory of one GPU (80GB, 24GiB, 81920MiB, or a GPU such as A100-80GB, H100, RTX4090): a fits / does not fit "
    "verdict with the margin and, when it does not, the cheapest change that makes it fit":
        "单块 GPU 的显存（80GB、24GiB、81920MiB，或 A100-80GB、H100、RTX4090 等 GPU 名称）：给出放得下/放不下的结论"
        "与余量，放不下时给出能放下的最便宜改动",
    "parameters inside the MoE experts (AutoEP shards these over expert_parallel.autoep_size)":
        "MoE 专家内的参数量（AutoEP 按 expert_parallel.autoep_size 切分这些参数）",
    "launched by the HF Trainer: advice in its flags (--gradient_checkpointing)":
        "由 HF Trainer 启动：建议使用它的参数（--gradient_checkpointing）",
    # init
    "write a ds_config for a model and its GPUs: the cheapest in compute that fits":
        "为模型及其 GPU 写出 ds_config：放得下的方案中计算代价最低的一个",
    "an HF model's config.json (its shape)": "HF 模型的 config.json（用于其结构）",
    "GPUs per node": "每个节点的 GPU 数",
    "memory of one GPU (80GB, or A100-80GB, H100, RTX4090)": "单块 GPU 的显存（80GB，或 A100-80GB、H100、RTX4090）",
    "launched by the HF Trainer (\"auto\" values, its flags)": "由 HF Trainer 启动（\"auto\" 值，使用它的参数）",
    "sequence length in tokens (default 2048)": "序列长度（token 数，默认 2048）",
    "sequences per GPU (default 1)": "每块 GPU 上的序列数（默认 1）",
    "default: bf16, or fp16 on a GPU without bf16 (V100, T4)": "默认：bf16；GPU 不支持 bf16 时（V100、T4）为 fp16",
    "nodes (default 1)": "节点数（默认 1）",
    "write the config there (default: print it)": "把配置写到该文件（默认：打印出来）",
    "the model's hidden size (activations, persistent parameters, the HF Trainer's \"auto\" buckets)":
        "模型的隐藏层大小（用于激活值、常驻参数，以及 HF Trainer 填写的 \"auto\" 桶大小）",
    "transformer layers": "Transformer 层数",
    "sequence length in tokens": "序列长度（token 数）",
    "sequences per GPU (default: the config's train_micro_batch_size_per_gpu)":
        "每块 GPU 上的序列数（默认：配置中的 train_micro_batch_size_per_gpu）",
    "attention heads: counts the attention scores (leave out with flash attention)":
        "注意力头数：计入注意力分数（使用 flash attention 时不要给）",
    "vocabulary: AutoTP leaves the input embedding (V × H) whole on every rank":
        "词表大小：AutoTP 在每个 rank 上完整保留输入嵌入（V × H）",
    "key/value heads (with --heads): AutoTP splits attention by them":
        "键值头数（与 --heads 一起）：AutoTP 按它们切分注意力",
    "RAM of one node (512GB, 1TB): offload is chosen only where the host figure per node (CPU Adam states, pinned "
    "buffers) fits it (default: not checked, said)":
        "一个节点的内存（512GB、1TB）：只有每节点主机内存（CPU Adam 状态、锁页缓冲区）放得下时才选择卸载"
        "（默认：不检查，并说明）",
    "ZeRO-3: the model is built whole on each rank, not under deepspeed.zero.Init":
        "ZeRO-3：模型在每个 rank 上完整构建，而不是在 deepspeed.zero.Init 下构建",
    "en or zh (default: zh when LANG is a zh locale, else en)":
        "en 或 zh（默认：LANG 为中文区域设置时为 zh，否则为 en）",
    # convert (issue 40)
    "accelerate launch options, over the YAML's (\"--use_deepspeed --zero_stage 3 --mixed_precision bf16\"); with "
    "--use_deepspeed no YAML is needed":
        "accelerate launch 的选项，优先于 YAML 中的设置（\"--use_deepspeed --zero_stage 3 --mixed_precision bf16\"）；"
        "给出 --use_deepspeed 时可以不要 YAML",
    "also write the matching accelerate YAML beside the config (FILE.accelerate.yaml; needs -o)":
        "同时在配置旁写出对应的 accelerate YAML（FILE.accelerate.yaml；需要 -o）",
    "accelerate release of that YAML (default: the installed one if snapshotted, else the newest)":
        "该 YAML 所用的 accelerate 版本（默认：已安装且有快照的版本，否则最新版本）",
    "a ds_config file (JSON or hjson), or an accelerate YAML config":
        "一个 ds_config 文件（JSON 或 hjson），或一个 accelerate 的 YAML 配置",
    "accelerate YAML <-> the ds_config accelerate's DeepSpeedPlugin builds from it":
        "accelerate 的 YAML 配置 <-> accelerate 的 DeepSpeedPlugin 由它生成的 ds_config",
    "an accelerate YAML config, or a ds_config (with --to accelerate)":
        "accelerate 的 YAML 配置，或一个 ds_config（配合 --to accelerate）",
    "what to write (default: a YAML gives a ds_config, a ds_config gives a YAML)":
        "要写出的内容（默认：YAML 转为 ds_config，ds_config 转为 YAML）",
    "accelerate release whose rules are followed (default: the installed one if snapshotted, else the newest)":
        "遵循哪个 accelerate 版本的规则（默认：已安装且有快照的版本，否则最新版本）",
    "with --to accelerate: num_processes of the YAML (default 1)":
        "配合 --to accelerate：YAML 中的 num_processes（默认 1）",
    "write there (default: print it)": "写到该文件（默认：打印出来）",
    "replace a read-only or hard-linked output": "替换只读或有硬链接的输出文件",
}
"""Each help string of ``dsfields``' command line → its Chinese."""


def help_zh(text: str | None) -> str | None:
    """``text`` in Chinese when the table has it (argparse's words too), else unchanged."""
    if text is None:
        return None
    return HELP_ZH.get(text) or ARGPARSE_ZH.get(text) or text
