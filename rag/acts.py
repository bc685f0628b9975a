"""Step 3 of an answer: what the user is asking for (the question act).

The first sentence of the answer must do what the act asks: a diagnosis opens with the most
likely cause, "is this normal" with yes/no, a fit question with fits / does not fit, batch
arithmetic with the arithmetic on the user's numbers. Rules over both languages' phrasings,
measured on the real-question dev set (``bench/eval_answers.py`` prints act accuracy).

Issue reports describe a lot and ask little: what was pasted (a traceback, an error) and what was
observed (a symptom, a failure) set the prior towards a diagnosis, and the sentences that actually
ask (:func:`asked_sentences`, usually the title and the last lines) decide when they ask for
something else — a fit, a setting, the arithmetic, a yes/no about an effect.
"""

from __future__ import annotations

import re
from typing import Literal

from .parts import Part, prose_of
from .slots import extract_gpu, extract_slots

Act = Literal["diagnose", "is_normal", "yes_no", "fit", "batch_arithmetic", "configure", "explain"]
ACTS: tuple[Act, ...] = ("diagnose", "is_normal", "yes_no", "fit", "batch_arithmetic", "configure", "explain")


def _rx(pattern: str) -> re.Pattern[str]:
    """Case-insensitive, with ASCII word boundaries: in "训练会hang" or "显存OOM了" the English word touches Chinese
    characters, which Unicode ``\\b`` counts as letters of the same word."""
    return re.compile(pattern, re.I | re.ASCII)


_IS_NORMAL = _rx(
    r"正常(?:来讲|来说|情况下)[^。？?\n，,]{0,30}(?:吗|么)|不合理|\bunrea?sonable\b|\bsupposed? to (?:happen|be)\b|\b(?:is|isn'?t|not) rea?sonable\b|正常吗|正常么|正常嘛|是否正常|正不正常|是正常的|正常现象|合理吗|合理么|是否合理|符合预期吗|预期的吗|应该是这样吗|"
    r"\bis (?:this|that|it) (?:the |an? )?(?:normal|nomal|natural|expected|intended|rea?sonable)\b|本身就(?:应该|该)?是这样|本来就(?:应该|该)?是这样|\b(?:intended|expected)(?: behaviou?r)?\s*[?？]|\bis (?:this|it|that) expected\b|"
    r"\bexpected\s*\?|\bnormal\s*\?|\bis it normal\b|\bmake sense\s*\?|"
    r"\bisn'?t (?:it|this|that) (?:normal|nomal|expected)\b|\bis (?:this|that|it) as (?:expected|intended)\b|"
    # "I wonder if this normal case?", "Just not sure if this is normal since …", "so I just wonder if this is normal"
    r"\b(?:if|whether)\s+(?:this|that|it)(?:\s+is|\s+was|'s)?\s+(?:a\s+|the\s+)?(?:normal|expected|intended)\b|"
    # "whether this variation is expected behavior", "if the slowdown we see is normal", "does that sound reasonable?"
    r"\b(?:if|whether)\s+(?:this|that|the|these|such|our|my)\s+(?:[\w-]+\s+){1,3}(?:is|are|was|were)\s+(?:an?\s+|the\s+)?"
    r"(?:normal|expected|intended|rea?sonable)\b|"
    r"\b(?:does|do) (?:that|this|it|these|those)(?: numbers?| results?| figures?)? sounds? (?:rea?sonable|normal|right|about right|ok(?:ay)?)\b|"
    # "Is this time for per iteration good or it's slow?" (Megatron-DeepSpeed #199): a measurement held against a norm
    r"\bis (?:this|that|it) (?:[\w-]+ ){0,5}(?:good|ok(?:ay)?|fine|normal|rea?sonable) or (?:it'?s |is it |too )?(?:slow|too slow)\b"
)
# Tag questions ("…, right?", "correct?", "is this a bug?", "should it be 2?") check a claim: "is it normal" only when
# the user reports something observed (a log, a measurement, a symptom); otherwise a yes/no question about the claim.
_TAG_CHECK = _rx(
    r"\bright\s*\?\s*$|\bcorrect\s*\?\s*$|isn'?t (?:correct|right) is it|\bis (?:this|it|that) (?:a )?bug\b|"
    r"\bshould (?:it|this|that) (?:be|not be)\b.*\?|"
    # "…, shouldn't solution B use significantly less memory than A?": the user's expectation held against what they saw
    r"(?:^|[,.;:]\s*|\b(?:but|however|so)\s*,?\s*)shouldn'?t\s+\w+\s+\w+(?![^?\n]{0,160}\d\s*[=*×/])[^?\n]{0,160}\?"
)
# The quantity asked in other word orders and abbreviations: "微调显存需要多少？", "需要的显存是个什么规模", "How much GPU mem
# needed for 7B model?", "How much is required to fine-tune the 7B model?", "What resources are needed to train 70B …?"
#: After "how many GPUs": the GPUs someone else's run used, asked about (no fit question); nor is "no matter how many
#: GPUs I used" (espnet #2772) one.
_NOT_THEIR_RUN = (
    r"(?![^?\n]{0,60}?\b(?:are|were|was|is)\s+(?:they\s+|it\s+|you\s+)?(?:used|run|trained)\b|"
    r"[^?\n]{0,60}?\b(?:were|was)\s+(?:they|it|you)\b|[^?\n]{0,60}?\b(?:did|do)\s+(?:you|they)\s+(?:use|train|run)\b)"
)
_FIT_MORE = (
    r"(?:设备|硬件)条件\s*(?:是|为)?\s*(?:什么|多少|怎样)|设备要求|(?:显存|内存)\s*(?:需要|需求|要求)\s*(?:是|为|大概|大约)?\s*多[少大]|(?:需要|所需)的?(?:显存|内存)(?:是|为)?(?:多少|多大|大小|规模|是个什么)|"
    r"\bhow much (?:gpu |v)?mem\b|\bhow much (?:\w+ ){0,2}(?:is|are) (?:needed|required)\b|"
    r"\bwhat (?:\w+ )?(?:resources?|hardware|gpus?) (?:is |are )?(?:needed|required)\b|"
    # the GPU count a run needs, asked as a verdict: "do I actually need 8 gpus for PPO?", "does it require 2 nodes?",
    # "是否需要8张卡", "一定要80g的?"
    r"\b(?:do|does|would|will) (?:i|we|you|it|this|one) (?:\w+ )?(?:need|require) (?:at least |more than |\d+ or )?\d+ "
    r"(?:[\w-]+ )?(?:gpus|cards|nodes|devices)\b|(?:是否|是不是|一定|必须)(?:需要|要)\s*(?:至少)?\s*\d+\s*(?:张|块|台)?\s*(?:卡|显卡|gpu|机器)|"
    # the hardware the authors trained on: "Any information on the exact hardware used when training Zephyr?", "what GPUs
    # did you use to train it?", "你们训练用的什么显卡"
    r"\b(?:hardware|gpus?|machines?|resources|devices)\s+(?:that\s+)?(?:was\s+|were\s+|you\s+)?used\s+(?:to|for|when|in|during)\s+"
    r"(?:the\s+)?(?:train|fine|pre|reproduc|sft)|\bwhat (?:\w+ ){0,2}(?:hardware|gpus?|machines?) (?:did|do) you (?:use|train)\b|"
    r"(?:用|使用)(?:了)?(?:什么|哪些|哪种|多少张?)(?:样的)?(?:显卡|硬件|gpu|卡)(?:训练|微调|跑)|"
    # a choice of hardware by what it runs: "which option can run PPO model?", "哪个配置能跑"
    r"\bwhich (?:option|setup|gpu|card|machine|configuration|config|one)\s+(?:can|could|will|would)\s+(?:run|train|fit|handle|hold)\b|"
    r"哪(?:个|种)(?:配置|方案|显卡|卡|选项)(?:能|可以|才能)(?:跑|训练|微调|运行|放下)"
)
# Asking for a quantity of memory / hardware (not "why did memory not drop by much").
_FIT = _rx(
    _FIT_MORE
    + r"|显存\s*(?:是|为|大概|大约|要)?\s*多少|\bwhat (?:\w+ ){0,2}requirements?\b|够不够|够吗|够用吗|能跑吗|能不能跑|跑得动吗|跑得起|能否跑|放得下吗|装得下吗|能放下|放不放得下|能装下|装不装得下|"
    r"能不能放下|能不能装下|塞得下|"
    # whether the hardware cannot carry it, asked as a verdict: "是不是单卡训不了", "难道8卡还跑不动34B吗", "应该带得动吧？"
    r"(?:是不是|是否|难道|是因为)[^。？?！!\n]{0,24}(?:训不了|跑不了|训不动|跑不动|带不动|放不下|装不下|(?:训练|微调|运行)不了)|"
    r"(?:带|跑|训)[得的]动(?:吗|么|吧)|"
    r"需要多少(?:显存|内存|卡|gpu|GPU)|需要多大(?:显存|内存)|"
    # "需要使用至少多大的显卡", "最少要多大的卡": the size of card a run needs
    r"(?:需要|要|得)(?:使用|用)?\s*(?:至少|最少|最低)?\s*多大的?(?:显卡|卡|gpu|GPU|显存)|要多少(?:显存|内存)|要多大显存|多少显存(?:才|能|可以)|"
    r"显存需求|显存要求|最低配置|最低硬件|最少需要|至少需要|最少要|需要几张|几张卡|最低.{0,6}显存|资源要求|"
    # "需要的显卡最小资源是多少", "硬件最低要求是多少", "究竟使用多少张卡比较稳", "单张A800能否8192长度的token微调"
    r"最小资源|最低资源|最低要求|(?:用|使用|需要)多少张|能否(?![^，,。？?\n]{0,20}(?:并行|减少|降低|配置|修改|怎么|如何))[^，,。？?\n]{0,20}(?:微调|训练)|"
    # "这个有没有配置要求？", "需要什么配置", "GPU、系统内存有配置参考吗": the hardware a run needs
    r"配置要求|硬件要求|硬件需求|显卡要求|gpu\s*要求|配置参考|需要什么(?:样的)?(?:配置|硬件|显卡)|"
    r"需要多少资源|需要多大的?(?:显存|内存|资源)|要多大的?(?:显存|内存)|"
    r"能训练吗|可以训练吗|能微调吗|可以微调吗|能否训练|能否微调|是否可行|可不可以跑|能开多大|开多大|最大.{0,8}(?:micro|batch|批)|"
    r"\bhow (?:large|big|high) (?:a |can |could )?(?:the )?(?:micro[- ]?)?batch|\bmax(?:imum)? (?:micro[- ]?)?batch (?:size )?(?:that )?(?:fits|can)|"
    r"\bwill (?:it|this|that) fit\b|\bdoes (?:it|this|that) fit\b|\bfits? (?:in|on|into)\b|\benough (?:gpu )?(?:memory|vram)\b|"
    r"\bhow (?:much|many) (?:gpu |cpu |v)?(?:memory|vram|ram)\b|\bmemory requirements? (?:for|to|of)\b|"
    r"\bhow much (?:(?:gpu |v)?(?:memory|vram|ram) )?(?:does|do|would|will|should|did) (?:it|this|that|i|we|they|one|the (?:model|run|training))\s+(?:need|take|require|use)\b(?!\s+(?:time|long|hours?|minutes?|days?))|"
    # (not the GPUs someone else's run used: "how many gpus and how many images per gpu are used to train the provided
    # checkpoints?" (mmsegmentation #198), "how many GPUs were they run on?" (mmpretrain #371))
    r"(?<!no matter )(?<!regardless of )\bhow many (?:[\w-]+ ){0,2}gpus\b" + _NOT_THEIR_RUN + r"|"
    r"\bminimum (?:gpu|hardware|vram|memory|requirement)|\bminimum of memory|\bhardware requirements?\b|"
    r"\brecommend\w* (?:gpu|hardware)|\b(?:need|needs|require|requires) at least \d+\s*gb|\b(?:gpu|resource|vram|hardware) requirements?\b|\bcan (?:i|we) do (?:it|this|that) (?:in|on|with)\b|"
    r"显存占用(?:是|为|大概|大约|要)?多少|占用多少显存|(?:会|要|大约|大概)\s*占(?:用)?\s*多[大少]的?\s*显存|"
    # "are four 3090 GPUs (with 24GB each * 4) sufficient?": whether the named hardware is enough
    r"\b(?:is|are|would|will)\b[^?？\n]{0,80}\b(?:gpus?|cards?|[ahv]100s?|[34]090s?|a[46]000s?|\d+\s*gb)\b[^?？\n]{0,60}\b(?:sufficient|enough)\s*[?？]|"
    r"(?<!\bhow )\bcan (?:i|we) (?:(?:fully|still|actually|even|also|really|just) )?(?:train|fine[- ]?tune|run|load)\b|\bis it possible to (?:(?:do|run) (?:the )?)?(?:train|fine[- ]?tune|pre-?train)|\bpossible to (?:train|fine[- ]?tune)\b|"
    r"\brequired (?:(?:gpu|cpu|system) )?(?:memory|vram|ram)\b"
)
# A symptom the user observed.
_SYMPTOM = _rx(
    # ("… 均不管用", "加载数据时直接被kill", "NCCL超时", "反而占用更多显存", "显存占用没有很明显的减少", "corrupted weights")
    r"不管用|超时|被\s*kill|反而|没有?(?:很|太)?明显的?(?:减少|降低|下降|变化|提升)|\bcorrupt\w*|"
    r"报错|出错|错误|报了|异常|奇怪|卡住|卡死|卡在|(?:非常|特别|极其?|超级?|巨|好)慢|会爆|爆内存|炸了|不足|遇到.{0,6}(?:问题|情况)|挂了|崩了|爆了|爆显存|(?<![a-z])oom|溢出|被杀|killed|变慢|很慢|不降|不下降|上升|"
    r"越来越|持续(?:增长|增加|上升|上涨|升高)|(?:逐渐|逐步|突然)(?:增加|增长|上升|升高|变大)|崩溃|不完整|一直涨|一直在涨|在涨|不断(?:增|上|涨)|涨到|增长|(?<![a-z])nan(?![a-z])|失败|不生效|没效果|无效|不起作用|没(?:有)?起(?:到)?作用|没有变化|没变|不变|一样|差不多|并没有|没有减少|没降|"
    r"不一致|不匹配|对不上|不对|超显存|显存不足|不够|挂起|高于|低于|不如|没有.{0,6}快|慢了|占了|占用了|差距|下降了|降低了|掉了|"
    r"(?:下降|降|衰减|涨|增长|上升|变化)得?(?:很|特别|非常|太|过于)快|(?:不|没有?)参与(?:计算|训练|工作)|不工作|闲置|这就导致了|结果却|无法(?:训练|计算|运行|启动|加载|保存|收敛)|停(?:留|滞)在|(?:使用率|利用率)\s*(?:是|为|只有)?\s*0(?![.\d])|\bidle\b|明显高|明显低|偏高|偏低|过高|过大|太大|太高|太慢|太快|超出|超过了|爆掉|内存爆|显存爆|却|比(?!较|如).{0,12}(?:大|高|多|慢|低|少|差)|"
    r"\berror\b|\bfails?\b|\bfailed\b|\bfailing\b|\bcrash\w*|\bhang\w*|\bstuck\b|\bbug\b|\bmismatch\w*|\bwrong(?:ly)?\b|\bincorrectly\b|"
    r"\bweird\b|\bstrange\b|\bunexpected\w*|\bdoesn'?t work\b|\bnot working\b|\bincreas\w* (?:over|during|with each|after)|"
    r"\bkeeps? (?:growing|increasing)\b|\b(?:increas|grow|ris)\w* (?:so |very |too )?(?:fast|quickly|rapidly)\b|"
    r"\b(?:never|not|doesn'?t|does not|won'?t) (?:get )?releas\w*|"
    r"\bleak\w*|\bout[- ]of[- ]memory\b|\bbroke\b|\bbroken\b|\bOOMs?\b|\boutof ?memory\b|\bslow\w*\b|\bdiverg\w*|\bspike\w*|"
    r"\bexplod\w*|\bnan\b|\bworse\b|\bno (?:effect|difference|change)\b|\bignor\w*|"
    r"\bdoesn'?t (?:change|reduce|decrease|help|seem)\b|\bdon'?t see\b|\bdid ?n[o']t (?:\w+ )?(?:work|help|reduce|decrease|drop|go down|fit|run|start|converge|improve|finish|take effect|"
    r"seem|resolve|solve|fix|free|release|save|load|update|learn|affect|speed|change (?!anything|any\b))|\bunable\b|\bdoes not (?:work|fit|run|start|train|converge|decrease|reduce|change|help)\b|"
    r"\bsame (?:memory|loss|amount)\b|\bhigher than\b|\bmore memory than\b|\bused up\b|\bhigh loss\b|"
    r"\bshouldn'?t (?:it|this|that|they) (?:be|use|take|have)\b|\b(?:will|would|are|is|were|was|does|do|did) ?n[o']t (?:be |being )?(?:updated|trained|saved|loaded|used)\b|"
    r"没有?(?:被)?更新|不更新|\b(?:layers?|weights?|params?|parameters|adapters?|modules?) (?:are |is |were |was )?not (?:being )?(?:trained|updated)\b|\binsufficient\b|\bexceed\w*|\blower (?:accuracy|performance)\b|\bslower\b|\bshows? \"?out of memory|"
    r"\bnot (?:correct|right|equal)\b|\bbigger than expected\b|\bthan expected\b|\btoo (?:fast|slow|much|high|large)\b|"
    r"\beven though\b|\b(?:will|does|did|would)? ?not (?:change|decrease|reduce|drop|help|work)\b|"
    r"\b(?:not|never) (?:go(?:ing|es)? down|decreas\w*|reduc\w*|dropp?\w*|improv\w*|converg\w*|learn\w*|chang\w*)|"
    r"(?:一直|总是|老是|经常|又|还是|动不动就?)\s*(?:爆|崩|挂|卡(?![数张块]))|显存.{0,6}爆|"
    # "Unbalanced GPU memory usage", "显存负载不均衡", "LoRA takes more memory with ds than on one GPU": an observation
    r"\b(?:performance|throughput|speed|accuracy|utili[sz]ation|mfu|tflops)\b[^.\n]{0,30}\b(?:drops?|dropped|degrad\w*|regress\w*)\b|"
    r"\b(?:un|im)balanced?\b|\bimbalance\b|\bunevenly?\b|不均衡|不平衡|不均匀|"
    # "a gradual increase in GPU memory usage", "memory rises continuously", "high memory usage but low gpu-util"
    r"\b(?:gradual|steady|continuous|constant)\w* (?:increase|growth|rise)\b|\b(?:rises?|rising|grows?|growing|increas\w*) "
    r"(?:continuously|steadily|gradually|constantly)\b|\bincrease in (?:\w+ ){0,2}(?:memory|usage|loss)\b|"
    r"\b(?:high|low) (?:[\w-]+ ){0,3}(?:usage|util\w*)\b|"
    r"\b(?:speed|throughput|time|memory|loss)\b[^.?\n]{0,40}\b(?:is|are|was|were|stays?|remains?) (?:(?:almost|nearly|roughly|basically|about|"
    r"exactly|still|pretty much|essentially|virtually|practically) )?(?:the )?same\b|"
    r"\b(?:takes?|uses?|using|consum\w*|occup\w*|needs?|requires?)\s+(?:(?:much|way|far|a lot|significantly)\s+)?(?:more|less)\s+"
    r"(?:\w+\s+){0,2}?(?:memory|vram|time)\b|\bwon'?t (?:change|decrease|reduce|drop|help|work)\b|\bimpossible\b|\bplum+et\w*|\b(?:similar|same) (?:issue|problem|error)\b|\bnothing to do with\b|\bstill (?:\d|the same|OOMs?\b|uses?|using)|还是\s*(?:oom|OOM|爆|不够|不行|\d)"
)
# A failure reported as such ("进入 eval 就报 OOM", "training hangs"): observed even without "I" or numbers.
_FAILURE = _rx(
    r"报\s*oom|爆\s*oom|爆显存|显存爆|卡住|卡死|卡在|\boom(?:ed|s)?\b|out[- ]?of[- ]?memory|\bhangs?\b|\bhanging\b|\bcrash\w*|"
    r"\bnan\b|报错|\bkilled\b|挂了|崩了"
)
_WHY = WHY_ASK = _rx(
    r"为什么|为啥|为何|怎么回事|什么原因|啥原因|原因是|因为什么|怎么解决|如何解决|怎么办|咋办|解决方法|求助|办法解决|解决办法|解决方案|"
    r"问题出在|哪里出[了的]?问题|出了什么问题|哪里.{0,10}问题|"
    r"\b(?:any|a) (?:solution|fix|workaround)s?\b|\b(?:something|anything) (?:that )?(?:i|we)(?:'m| am| are)? (?:missed|missing)\b|"
    r"\breasons? (?:behind|for) (?:this|that|it)\b|"
    r"\bwhy\b|\bfix\b|\bsolve\b|\bresolve\b|\bwhat (?:am i|is) (?:missing|wrong)|\bwhat went wrong\b|\bcauses? of (?:the|this) (?:problem|issue)\b|\bwhat(?:'s| is| was) (?:the |a )?(?:reason|cause|problem|issue)\b|\bwhat (?:causes?|caused)\b|\bany idea\b(?! (?:how|what|which) (?:to|i should|we should) (?:set|choose|configure|use|pick|scale|adjust))|\bhow (?:can|do) i (?:fix|avoid|solve)\b"
)
_BATCH = _rx(
    r"多少步|几步|(?:多少|几)\s*个\s*(?:steps?|iter\w*|步)|步数\s*(?:是|为|有|会是)?\s*(?:多少|几)|(?:怎么|如何)(?:算|计算).{0,8}步数|steps? per epoch|how many steps|number of (?:training |optimi[sz]ation )?(?:steps|iterations)|\biterations? (?:per|for|in) (?:one |an |each )?epoch|total (?:optimi[sz]ation )?steps|"
    r"\bhow (?:is|are|was|were) (?:the )?[\w'\"` -]{0,30}(?:batch|steps?|epochs?|tokens?|iterations?)\w*['\"`]? (?:calculated|computed|determined|derived)\b|"
    r"\b(?:batch|steps?|epochs?|tokens?|iterations?)\w*['\"`]? (?:is|are|was|were) (?:calculated|computed) (?:like|as|this)\b|"
    r"一个\s*epoch.{0,10}(?:多少|几)|每个\s*epoch.{0,10}(?:多少|几)|tokens? per (?:step|batch)|每步.{0,4}token|"
    # what one step holds: "how many samples does each optimizer step see?", "一个 step 是多少条样本？"
    r"\bhow many (?:\w+ ){0,2}(?:samples|examples|sequences|tokens|images|rows)\b[^?\n]{0,40}\b(?:per|each|one|every|a single)\s+"
    r"(?:optimi[sz](?:er|ation)\s+)?(?:step|update|iteration)s?\b|"
    r"(?:一个|每个?|每一)\s*(?:step|步|iteration|迭代)[^？?\n]{0,12}(?:多少|几)\s*(?:条|个)?\s*(?:样本|数据|token|sample)|"
    r"(?:总|全局|有效|实际|global|effective|total|actual|real)\s*(?:的)?\s*(?:train(?:ing)?\s*)?(?:batch|批次?)(?:[-_ ]?size)?[`']?\s*(?:大小)?\s*(?:是|为|=|is|will be)?\s*(?:多少|几|what|\?)|"
    r"\bwhat (?:is|will be) the (?:\w+ )?[\"'`]?(?:global|effective|total|final)[-_ ]batch|"
    r"\bwhat the (?:actual |real )?(?:effective |global |total )?batch[-_ ]?size (?:is|was|will be)\b|"
    # "Could you clarify if the said batch size is per GPU or global?", "是单卡的还是所有卡的总batch？": per GPU or in all
    # "does the "batchsize" refer to the total batchsize of all GPUs?": whether the batch counts all GPUs
    r"\b(?:refers?|mean|means) (?:to )?the (?:total|global|overall) batch[-_ ]?size\b|"
    r"\bper[- ](?:gpu|device|card|replica)\b[^?\n]{0,40}\bor\b[^?\n]{0,20}\b(?:global|total|overall|all (?:the )?gpus)\b|"
    r"\b(?:global|total|overall)\b[^?\n]{0,30}\bor\b[^?\n]{0,20}\bper[- ](?:gpu|device|card|replica)\b|"
    # "batchsize是config里设置的值，还是需要该值乘以显卡数", "… or multiplied by the number of GPUs?"
    r"还是[^？?\n]{0,12}乘以?\s*(?:显卡|卡|gpu)\s*(?:数|的?数量|个数)|\bor (?:is it )?multiplied by the (?:number|count) of (?:gpus|devices|processes)\b|"
    r"(?:单卡|每张?卡|每个?gpu)[^？?\n]{0,20}还是[^？?\n]{0,10}(?:总|全局|所有卡|多卡)|怎么算|如何计算|怎么计算|(?:batch|steps?|tokens?|epoch)[^?\n]{0,30}\bhow (?:is it|to|do (?:i|we)) (?:calculate|compute)|\bhow (?:is|to|do (?:i|we)) (?:calculate|compute)[^?\n]{0,30}(?:batch|steps?|tokens?|epoch)|"
    r"是\s*\d+\s*还是\s*\d+|(?<!\d)\d+\s*还是\s*\d+|\bor\s+\d+\s*\?|"
    r"(?:effective|global|total|final|overall)\s+batch(?:[-_ ]?size)?\s+(?:of|=|is|will be|would be|equals?|should be)\s+\d+|"
    r"\b(?:know|tell|share|what (?:is|was|were))\s+(?:us\s+|me\s+)?the\s+(?:actual\s+)?(?:effective|global|total)\s+batch|"
    r"batch[\w ]{0,20}(?:should|would|will|must)?\s*(?:be|equals?(?: to)?)\s[^?？\n]{0,40}(?<![=!<>])=\s*\d+\s*[?？]|(?:有效|全局|总的?|实际)\s*(?:batch|批次?)(?:[-_ ]?size)?\s*(?:是|为|=)\s*\d+"
)
# Step counts with numbers: "为什么 step 是 351", "each epoch will have 500,000 steps".
_STEPS = _rx(
    r"(?<![\d,])\d[\d,]*\s*(?:个)?\s*steps?\b|steps?\s*(?:也|都|只|才|就)?\s*(?:是|为|=|is|was|有)\s*\d|\d\s*步|epoch.{0,30}steps?|steps?.{0,30}epoch|"
    r"GLOBAL_BATCH_SIZE|global_batch_size\s*(?:=|是)"
)
_CONFIGURE = _rx(
    r"(?:需要|要不要|需不需要|是否需要|要)(?:相应(?:地)?|跟着|同步)?(?:调整|调|修改|改|乘|除|缩放|设置|设|增大|减小|放大|缩小)[^。？?]{0,20}(?<!什)[吗么]|"
    r"\b(?:do|should) (?:i|we) (?:also )?need to (?:adjust|change|scale|divide|multiply|set|increase|decrease|modify|tune)\b|"
    r"(?:要|需要|应该)(?:把|将)?[^。？?]{0,20}(?:加倍|翻倍|乘以?|除以?|调大|调小|增大|减小|放大|缩小|改成|改为|变成|设为|设成)[^。？?]{0,20}(?:[吗么]|[？?])|"
    r"指南|教程|\bguide\b|\btutorial\b|怎么设置|如何设置|怎么设|如何设|怎么配置|如何配置|怎么配|该怎么|应该怎么|应该设|设多少|设置多少|设成多少|推荐|建议|"
    r"最佳|最优|怎样设置|怎么改|如何修改|怎么调|如何调|参数怎么|如何编写|怎么写|选哪个|用哪个|"
    r"\bhow (?:do|should|can) (?:i|we) (?:set|configure|choose|pick|specify|use|enable|change|adjust|write)\b|"
    r"\bwhat (?:\w+ )?(?:should|shall) (?:i|we) (?:set|use|choose)\b|\bwhat (?:[\w-]+ ){0,2}(?:should|shall|needs? to|has to|must) be (?:used|set|modified|changed|adjusted|tuned)\b|"
    # "what should the learning rate set?", "what should my batch size be?": the value of a named setting
    r"\bwhat (?:should|shall|would) (?:the |my |our )?[\w-]+(?: [\w-]+)? (?:be set|be|set)\s*(?:to\s*)?[?？]|"
    r"\bwhich (?:[\w-]+ ){0,2}to use\b|\bhow (?:i|we) (?:should|can|could) (?!fix|solve|avoid|resolve|understand|interpret|calculate|compute)\w+|\brecommend\w*\b|\bbest (?:way|setting|practice|value)\w*\b|"
    r"\bhow to (?:set|configure|choose|enable|use|specify|change)\b|\bhow should\b|"
    r"\bwhich (?:one|stage|setting|value|option) (?:should|to)\b|\bsuggest\w*\b|\bproper (?:way|setting|value)\b|"
    r"\bany (?:recommendation|advice|suggestion)s?\b|\bis there (?:a|any) way\b|"
    r"\b(?:right|correct|proper|recommended) (?:setting|config\w*|value|hyper-?param\w*)s?\b|"
    r"\b(?:convenient|easiest|simplest|recommended|standard) way\b|"
    r"\bwhat (?:is|was|were) the (?:best |recommended |right )?(?:batch[-_ ]?size|learning[-_ ]rate|lr|hyper-?param\w*|settings?)\s+(?:for|used|you)\b|正确的?(?:设置|配置|参数)|"
    r"\bhow (?:to|can (?:i|we)|do (?:i|we)|should (?:i|we)|could (?:i|we)) (?!fix|solve|avoid|resolve|understand|interpret|calculate|compute)\w+|"
    # the authors' setting ("how did you set the accumulation steps for 8 GPUs?") and where a knob is set
    r"\bhow (?:did|do|would) you (?:set|configure|choose|pick|tune|adjust)\b|"
    r"\bwhere (?:is|are|do|can|should) (?:i |we )?(?:the )?[\w`'\" ]{0,30}\b(?:set|configured|specified|defined)\b|"
    r"在哪(?:里|儿)?(?:设置|配置|修改|改)|"
    r"(?:如何|怎么|怎样)(?:才能|来|去)?(?:调整|调|修改|改|设置|设|配置|配|编写|写|使用|用|转换|转|保存|加载|开启|启用|关闭|实现|训练|微调|跑)|"
    # turning a feature on or off ("如何启动gradient checkpointing", "怎样不保存这个文件", "how can I not save this folder")
    r"(?:如何|怎么|怎样)(?:才能|来|去)?(?:启动|打开|关掉|禁用|取消|(?:才能)?不(?:要|去)?(?:保存|存|生成|输出|加载|用|使用))|"
    r"how (?:can|do|could|should) (?:i|we) (?:\w+ )?(?:not|stop|disable|turn (?:on|off)|skip)\b|\bhow (?:i|we) can (?:\w+ )?not\b|"
    # choosing between two settings ("bf16和fp16如何选择", "sft用bf16还是fp16好"), the extra work a setup needs
    r"(?:如何|怎么|怎样)选(?:择|取)?|(?:用|选|开)[^？?。，,\n]{0,20}还是[^？?。，,\n]{0,20}(?:好|合适|更好)\s*(?:呢|吗)?\s*[?？]|"
    r"需要(?:做)?哪些[^？?。]{0,6}(?:配置|设置|修改|改动|调整)|"
    # a setting or a way that does it ("配置文件中有参数可以取消这个保存吗", "有没有办法在不调小 batch 的情况下…",
    # "Is there an option to …", "is there any example for pretraining on multiple nodes?")
    r"有(?:没有)?(?:什么|相关的?|其他的?)?(?:设置|参数|配置项?|选项|开关|办法|方法)(?:可以|能|来|在)|"
    # "能设置多卡qlora微调吗": whether a setting does it
    r"(?:能|可以|能否|能不能|可不可以)(?:设置|配置)[^。？?！!\n]{0,30}(?:吗|么|[?？])|"
    r"\b(?:is|if) there (?:a|an|any) (?:option|setting|parameter|flag|config\w*|argument|example)s?\b|\bwhat (?:else )?(?:do|should) (?:i|we) (?:need to )?(?:change|configure|set|modify)\b"
)
_EXPLAIN = _rx(
    r"解释|指的是|是指|的意思|这么理解|这样理解|做什么|干什么|干嘛|什么用|有什么用|什么是|是什么(?!原因|问题|情况)|什么意思|啥意思|原理|区别|差别|对比|比较|怎么理解|如何理解|含义|作用|机制|的意义|"
    r"\bwhat (?:is|are|does)\b(?! (?:the |a )?(?:reason|cause|problem|issue))|\bhow does\b|\bhow do\b|\bdifference\b|\bdiffer\b|\bcompare\w*|\bvs\.?\b|\bversus\b|"
    r"\bexplain\w*|\bmeaning\b|\b(?:any|specific|particular|a|some|good) reasons? (?:for|why|behind|(?:not )?to)\b|"
    r"\bunderstand\w*|\bmechanism\b|\bunder the hood\b|\bpurpose\b|\bwhy (?:avoid|use|do|is|are)\b"
)
_YES_NO = _rx(
    r"会不会|是不是|能不能|可不可以|有没有|是否|需不需要|要不要|吗\s*[？?]|吗\s*$|么\s*[？?]|(?<![什怎那多这])么\s*$|吧\s*[,，。.]*\s*$|"
    r"(?:^|[.?!\n]\s*)(?:does|do|is|are|am|was|were|will|would|can|could|should|shall|did|must|has|have)\b[^?\n]{0,200}\?|"
    # (after a conjunction or a leading condition: "And does each pass cost more?", "if rollout.n is doubled, will …?";
    # not a choice: "If a model uses BN, are the statistics updated per sample or per update?")
    r"(?:^|[.?!\n]\s*)(?:(?:and|so|but|also|then)\s+|if\b[^,?\n]{0,80},\s*)"
    r"(?:does|do|is|are|am|was|were|will|would|can|could|should|shall|did|must|has|have)\b(?![^?\n]{0,200}\bor\b)[^?\n]{0,200}\?|"
    r"\b(?:wonder|wondering|know|ask|asking|sure|curious|unsure)\s+(?:if|whether)\b"
)
# A question without a question word ("So if we set a batch smaller than 64 we will get the same result?"): yes/no.
# Topic titles ("Question about X?", "关于 X 的疑问？") are not questions.
_WH = _rx(r"\b(?:how|what|why|which|where|who|whom|whose)\b|怎么|如何|为什么|为啥|什么|哪|多少|多大|几")
_OWN_CLAIM_CHECK = _rx(
    r"\b(?:am i|are we)\s+(?:right|correct)\s*\?|\b(?:is )?my (?:understanding|hypothesis|assumption|guess)\b[^?\n]{0,40}"
    r"\b(?:right|correct)\s*\?"
)
# A quoted document ("文中写道：… unless you encounter OOM", "the README says: …") describes no symptom of the user's.
_QUOTED_DOC = _rx(
    r"(?:写道|原文如下|原文是|文档(?:中|里)?(?:说|写)|\b(?:the )?(?:docs?|documentation|readme|paper) (?:says?|states?|reads?)|"
    r"\bit says)\s*[:：][^\n]*"
)
_NOTICED = _rx(r"发现|观察到|看到|\b(?:noticed|observed|found that|realized|it turns out)\b")
_CLAIM = _rx(
    r"有误|写错|错了|不正确|似乎不对|\b(?:is|are|seems?|looks?) (?:wrong|incorrect|mistaken)\b|\btypo\b|\bmistake\b|"
    r"\b(?:may|might|could|will) (?:cause|lead to|result in)\b|(?:可能|会)(?:导致|造成)"
)
_WHY_WORD = _rx(r"为什么|为啥|为何|\bwhy\b")
# A definition offered for confirmation ("指的是 A*B*C 这样算出来的吗"), not asked for ("是什么意思").
_READING = _rx(r"指的是|是指|的意思是|\bmeans?\b|\brefers? to\b")
_ALTERNATIVE = _rx(r"\bor\b|还是|^\W*(?:and|but)\b")
_TOPIC_TITLE = _rx(
    r"^\W*(?:questions?|query|doubt|confus\w*|about|regarding|re|关于|有关|请教|疑问|问题)\b|^\W*(?:关于|有关)"
)
# A yes/no question about an effect ("修改 batch_size 对效果有影响吗", "will it affect the result?"): a question about
# a claim even when the message mentions a symptom as its motive ("显存不够，想减小 batch，会影响结果吗").
_EFFECT_ASK = _rx(
    r"(?<!什么)影响.{0,12}[吗么]|会不会.{0,20}影响|有没有.{0,6}影响|"
    r"^\W*(?:does|do|will|would|could|can|is|are)\b.{0,160}\b(?:affect|impact|hurt|matter|same (?:result|effect))"
)
_FIRST_PERSON = _rx(
    r"我(?:的|们|在|用|跑|训练|这边|遇到|发现|尝试|试了|设置|使用|运行|测试|微调)|我|"
    r"\bI(?:'m| am| have| get| got| see| tried| use| set| ran| run| noticed| found| did| trained|'ve| want| follow\w*| simply| just| added| changed| load\w*| launch\w*| start\w*)\b|\bmy\b|\bwe\b|\bour\b|"
    # what the user could not do or did not get ("I can't understand why …", "I don't see any speedup")
    r"\bI (?:can'?t|cannot|couldn'?t|don'?t|do not|didn'?t|did not|was|saw|observed|encounter\w*|hit|met|meet|face\w*)\b"
)
# (A Markdown heading, with or without the template's emoji: "### 🐛 Describe the bug".)
_TEMPLATE = re.compile(
    r"^#+\s*[^\w\n]{0,4}\s*(?:System Info|Reproduction|Expected behaviou?r|Others|Describe the bug|To Reproduce|"
    r"Environment|Information|Who can help\??|Additional context|(?:Steps )?(?:How )?to reproduce(?:\s*/\s*如何复现)?|如何复现|"
    r"复现方法|Current behaviou?r|Motivation|Your contribution)\s*$|"
    # the questions an issue form asks the reporter ("### Is there an existing issue for this?"; Unsloth's checklist
    # "1. Did you update? …", "4. Which notebook? Please link!", "5. Which Unsloth version, …, PyTorch version?",
    # "6. Which trainer? `SFTTrainer`, `GRPOTrainer` etc."): the tracker's words, not what the user asks
    r"^#*\s*Is there an existing issue for this\?|"
    r"^\s*\d\.\s*(?:Did you update\?|Which notebook\?(?: Please link!)?|Which Unsloth version,[^?\n]*\?|Which trainer\?)",
    re.I | re.M,
)
# Issue-template tags in a title ("[BUG]: …", "[Usage] …", "[问题/Issue] …", "[Help] <…>"): the tracker's form, not
# the user's words — "[BUG]" is not a reported symptom.
_TAG = re.compile(r"^\s*\[[^\]\n]{1,24}\]\s*:?", re.M)


# An error quoted inline in the prose (issue titles: "RuntimeError: FlashAttention only supports Ampere GPUs").
_ERROR_IN_PROSE = re.compile(
    r"\b(?:[A-Z]\w*)?(?:Error|Exception)\b|Traceback|Watchdog caught|Overflow detected|"
    # the fp16 loss scaler's messages ("Gradient overflow. Skipping step", "OVERFLOW! Rank 0 Skipping step")
    r"(?i:gradient overflow|\boverflow!|skipping step|loss scale already at minimum)|"
    r"torch\.Size\(\[0\]\)|报错|"
    r"\bassert\s+[\w.\[\]()]+\s*(?:[<>=!]=?|%)|"
    r"(?i:\btimed? ?out\b|killed|exit code|-9\b|\bis not supported\b|\b(?:could|can) ?not (?:find|load|save|be)\b|"
    r"\bcannot (?:find|load|save|be)\b)"
)
# Asking for a quantity: stays a fit question even when an error is quoted ("需要多少显存？一直报 OOM").
_FIT_QUANTITY = _rx(
    _FIT_MORE
    + r"|显存\s*(?:是|为|大概|大约|要)?\s*多少|\bwhat (?:\w+ ){0,2}requirements?\b|显存占用(?:是|为|大概|大约|要)?多少|占用多少显存|(?:会|要|大约|大概)\s*占(?:用)?\s*多[大少]的?\s*显存|\b(?:gpu|resource|vram|hardware) requirements?\b|需要多少|要多少|需要多大|要多大|最低配置|最低硬件|最少需要|至少需要|资源要求|"
    r"配置要求|硬件要求|硬件需求|显卡要求|gpu\s*要求|配置参考|需要什么(?:样的)?(?:配置|硬件|显卡)|"
    r"\bhow (?:much|many) (?:gpu |cpu |v)?(?:memory|vram|ram)\b|\bminimum\b|\bhardware requirements?\b|"
    r"\bhow much (?:(?:gpu |v)?(?:memory|vram|ram) )?(?:does|do|would|will|should|did) (?:it|this|that|i|we|they|one|the (?:model|run|training))\s+(?:need|take|require|use)\b(?!\s+(?:time|long|hours?|minutes?|days?))|"
    r"(?<!no matter )(?<!regardless of )\bhow many gpus\b" + _NOT_THEIR_RUN + r"|\brequirements? (?:for|to)\b"
)
# "4块A100（40G）不能全参数微调吗", "是否可以lora微调13b模型？", "can a single V100 run it?": a capability question
# (能 / 可以 … 训练 / 微调 / 跑 …吗) about a GPU count, a memory size or a model size asks whether it fits. (English "can I train …"
# is in _FIT; "is there any way I can fine-tune … on my setup?" after an OOM asks for a fix.)
_FIT_CAN = _rx(
    # ("3080的20G显卡，能做pretrain么？", minimind #386)
    r"(?:能|可以|能否|可否|能够)(?!设置|配置|设|配)[^。？?！!\n]{0,30}(?:训练|微调|全参|跑|运行|加载|放下|装下|完成|sft|pretrain|"
    r"预训练)[^。？?！!\n]{0,16}(?:吗|么|呢|[?？])|"
    # "A40 * 4 的配置是否支持 7b 模型全参微调呢？", "如果使用两个24G显卡可以吗？": whether the hardware carries the run
    r"是否(?:能够?|可以)?支持[^。？?！!\n]{0,40}(?:训练|微调|全参|全量|sft)|"
    r"(?:用|使用|换成?)[^。？?！!\n]{0,16}(?:卡|显卡|gpu)\s*(?:可以|行|够|能行)\s*(?:吗|么|[?？])|"
    # English: "Can the fine-tuning of the 7B model be done on an A100 40G?", "Can 4-card A100 with 80G train X in lora
    # mode?", "does 8 A100 80g enough to finetune 70b llama2 ?": a yes/no question whose verb is training on hardware.
    r"^\W*(?:\d+[.)]\s*)?(?:can|could|will|would|is|are|does|dose|do)\b(?! there\b)[^?？\n]{0,100}\b(?:train(?:ed|ing)?|fine[- ]?tun\w*|"
    r"finetun\w*|sft|be done|enough (?:to|for))\b[^?？\n]{0,80}[?？]|"
    # "May I ask if 8 * 3090 supports fine-tuning training" (LLaVA #842): whether the hardware supports the run
    r"\bsupports?\s+(?:the\s+)?(?:full[- ]?(?:parameter\s+)?)?(?:fine[- ]?tun\w*|finetun\w*|training|train|sft)\b"
)
# "Full fine-tune llama-2-13b on 8x V100 32GB, possible?": the training run first, the verdict asked after a comma
# (the asked clause alone, "possible?", names no run: the whole sentence is read).
_FIT_VERDICT_AFTER = _rx(
    r"\b(?:train(?:ed|ing)?|fine[- ]?tun\w*|finetun\w*|sft)\b[^?？\n]{0,100}[,，]\s*(?:is (?:it|this|that) )?"
    r"(?:possible|feasible|doable)\s*[?？]"
)


# "I need to train llama 3.1 70B in 8 bit QLoRA using 4 * A6000 GPUs. Can I do it?" (ms-swift #2074): a bare question
# whose run is the sentence before it.
_BARE_CAN = _rx(
    r"^\W*(?:(?:so|and|but)\s*,?\s*)?(?:can|could) (?:i|we|one) (?:do|achieve|manage|make) (?:it|this|that)(?: work)?\s*[?？]\s*$|"
    r"^\W*(?:is|would) (?:it|this|that) (?:be )?(?:possible|feasible|doable)\s*[?？]\s*$|^\W*(?:这样)?(?:可以|可行|能行|行)(?:吗|么)\s*[?？]?\s*$"
)
_TRAIN_RUN = _rx(r"\b(?:train\w*|fine[- ]?tun\w*|finetun\w*|sft)\b|训练|微调|全参|sft")


def _run_before(asked: str, prose: str) -> str:
    """The sentence before a bare "Can I do it?" (:data:`_BARE_CAN`) when it states a training run with a size, else "":
    the run it asks about."""
    if not _BARE_CAN.search(asked):
        return ""
    whole = [w.strip() for w in _WHOLE_SENTENCE_END.split(prose) if w.strip()]
    at = next((i for i, w in enumerate(whole) if asked.strip() in w), 0)
    before = whole[at - 1] if at > 0 else ""
    return before if _TRAIN_RUN.search(before) and (_SIZE.search(before) or _model_on_named_gpu(before)) else ""


_CONDITION = re.compile(r"(?:如果|假如|要是|若是|\bif\b|请问)[^。？?！!\n]*$", re.I)


def _condition_before(asked: str, whole_sentences: list[str]) -> str:
    """The condition ("如果只有20g，"), or the subject after "请问" ("请问3080的20G显卡，能做pretrain么？"), that opens the
    sentence an asking clause ends, or "" when there is none: a limit
    stated as a condition is the setup the question asks about; one stated as a fact ("单卡只有16GB显存，可以用多张卡微调吗，
    需要做哪些额外配置？") is the motive of a question about something else."""
    whole = next((w for w in whole_sentences if asked.strip() in w), "")
    head = whole[: whole.find(asked.strip())] if whole else ""
    m = _CONDITION.search(head)
    return m.group(0) if m else ""


def _model_on_named_gpu(sentence: str) -> bool:
    """ "fully fine-tune Phi-3 mini on an RTX 3090": a named model on a named GPU states the sizes a fit question needs
    (the card's memory, the model's count) as "7B" or "24G" would; a GPU alone ("bf16 训练的模型能在V100上跑吗") asks
    whether the card supports something, not whether a run fits."""
    if extract_gpu(sentence).gpu is None:
        return False
    named = extract_slots(sentence, prose=True)
    return named.model is not None or named.num_params is not None


_SIZE = _rx(
    r"\d+(?:\.\d+)?\s*b\b|\d+\s*(?:g|gb|gib)\b|显存|\bvram\b|\d\s*(?:张|块)|[单双多]卡|\b\d+\s*[-x×*]?\s*(?:cards?|gpus?)\b|"
    r"\b\d+\s*[x×*]?\s*(?:a|h|v|rtx ?)\d{2,4}\b|\b\d+\s*[x×*]\s*(?:20[6-8]0|30[6-9]0|40[6-9]0|50[7-9]0)\b"
)
# "how to train llama2-7b in a100 80G gpu?": how to train a model on a card of a stated memory size asks whether
# and how it fits (a memory size is required: "how to train on 2 GPUs" asks for the launch setting).
_FIT_HOW = _rx(
    r"\bhow (?:to|can (?:i|we)|could (?:i|we)) (?:fine[- ]?tune|finetune|train|sft)\b[^?？\n]{0,40}\b(?:on|in|with)\b"
)
_MEMORY_SIZE = _rx(r"\d+\s*(?:g|gb|gib)\b")
_CAUSE_ASK = _rx(
    r"是(?:不是)?因为|是否(?:是)?因为|由于.{0,12}(?:吗|么|[?？])|\b(?:is|was) (?:it|this|that) (?:because|due to)\b"
)
# "一个step是指跑了256条数据还是4*256条数据呢？", "1000 steps还是4000 steps", "the effective batch size is 8, not 2":
# a choice between two numbers asks for the arithmetic.
_NUM_ALTERNATIVE = _rx(
    r"\d[\d*×x.,]*\s*[^\s\d。？?，,]{0,12}\s*还是\s*(?:[^\s\d。？?，,]{1,6})?[\d(（]|"
    r"\b\d[\d*×x.,]*\s*(?:[a-z_]+\s+){0,3}or\s+(?:[a-z_]+\s+)?\d|\b\d+\s*,?\s*(?:and\s+)?not\s+\d"
)
# "12 * 1024 * 5 * 8 = 491,520 * 8?", "BATCH_SIZE should equal to 1X3X4 = 12?": arithmetic written in the question.
_ARITHMETIC = _rx(r"\b\d+\s*[*×xX/]\s*\(?\d+(?![.\deE/])|[\d)\]]\s*=\s*\d|!=|≠")
# What a step count is computed from: the data size or the epochs.
_DATA_SIZE = _rx(r"epochs?|\d\s*条|样本|samples?\b|examples?\b|数据集|dataset|num_train")
_VALUE_CHOICE = _rx(
    r"\d[\d.eE-]*\s*(?:[a-z_]+\s+){0,3}or\s+(?:[a-z_]+\s+){0,3}\d|\d[\d.eE-]*[^。？?]{0,12}还是[^。？?]{0,10}\d"
)
_COUNT_WORD = _rx(r"batch|steps?\b|epochs?|samples?|examples?|tokens?|样本|条|步|批|iterations?|迭代")
# "无论我如何设置max-seq，始终都会OOM", "不管怎么调都…", "无论多大的batch": a concession (whatever I set), not a question —
# the question word may follow the conjunction after a pronoun or an adverb.
_NOT_CONCESSIVE = "".join(f"(?<!{c}{'.' * n})" for c in ("无论", "不管", "不论") for n in range(3))
# A sentence that asks (rather than describes): a question mark, a sentence-final particle, or an opening
# question word. Issue reports describe a lot and ask little; the act is decided mostly by what is asked.
_ASK_SENTENCE = _rx(
    r"[?？]|[吗么呢吧]\s*(?:[,，。.!！~～]|$)|请问|想问|请教|求助|求教|不知道|有没有|是否|能否|会不会|是不是|能不能|可不可以|要不要|需不需要|对不对|"
    # ("最少要几张3090呀," (CPM-Bee #15): how many cards, asked without a question mark)
    # (not "前几张卡运行", "几张卡可以跑了": a few cards, told)
    r"(?:要|需要|得|用)\s*几\s*(?:张|块|台)|"
    rf"{_NOT_CONCESSIVE}(?:怎么|如何|多少|多大)|为什么|为啥|为何|什么原因|啥原因|哪个|哪些|"
    # (a clause after a comma that opens "does not …" / "is not …" describes: "…, a Titan GPU, does not support bf16")
    r"^\W*(?:how|what|why|is|are|does|do|did|can|could|should|would|will|must|any)\b(?!\s+not\b)|"
    r"\b(?:I wonder|wondering|(?:like|want) to ask (?:if|whether)|may I ask (?:if|whether)|I'?d like to (?:know|understand)|want to (?:know|understand)|(?:want|like) to (?:confirm|check|verify|make sure)|not sure (?:if|whether|how|why))\b|"
    r"\b(?:understand|know|sure|idea)\s+(?:how|what|which|whether)\s+(?:i|we|to)\b|"
    # "I can't understand why is it.", "I don't get why …", "不明白为什么": a why asked as what the user cannot explain
    r"\b(?:can'?t|cannot|couldn'?t|don'?t|do not|didn'?t|fail to)\s+(?:really\s+)?(?:understand|get|see|figure out)\s+(?:why|how)\b"
)
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n，,；;])|(?<=[.])\s+")
_WHOLE_SENTENCE_END = re.compile(r"(?<=[。！？!?\n；;])|(?<=[.])\s+")


#: What a user pastes of a run they made (not a code excerpt, which may quote a library or a doc).
_RUN_PASTES = frozenset({"command", "config", "log", "traceback", "error", "nvidia_smi"})


# A question that asks for help or a fix, however it is worded ("can anyone help?", "有办法解决吗？").
_HELP_ASK = _rx(
    r"\bhelp|\bsolutions?\b|\bsolve|\bfix|\bresolve|\bworkaround|\bany (?:ideas?|suggestions?|advice|hints?|clues?)\b|"
    # ("Is there anything i can do to handle this?", NeMo #2718)
    r"\banything (?:i|we|one) (?:can|could) do\b|\bany way to (?:fix|avoid|handle|solve|prevent|get around)\b|"
    r"解决|办法|帮|求助|指点|怎么办|咋办"
)

# What an action would do ("could float16 cause the loss to become NaN?", "会规避这个错误吗？", "也会报错吗？"), not whether
# something is wrong with the run ("is there a problem with …?", "是这个导致的吗？", "did you face this too?").
_WOULD = _rx(r"\b(?:will|would|could|does|do)\b|会")
# (A request to the reader — "could anyone give me some suggestions?", "would you mind providing …?" — is no yes/no.)
# The cause of "this problem" asked for: a diagnosis, whatever words the report used.
_PROBLEM_CAUSE = _rx(
    r"\b(?:ideas?|thoughts?|clues?)\s+(?:on|about|of|for|regarding)\s+(?:the\s+|what\s+)?caus\w*|"
    r"\bcauses?\s+of\s+(?:the|this|that|these|my)\s+(?:problem|issue|behaviou?r|error|slow\w*)s?\b|"
    r"(?:这个|此)问题的原因|问题(?:的)?原因(?:是什么|在哪)"
)
_PROBLEM_ASK = _rx(
    r"\bproblems?\b|\bissues?\b|\bmiss\w*|\bwrong\b|\bfaced?\b|问题|遇到|导致|情况|"
    r"\b(?:could|would|can|will) (?:you|anyone|someone|somebody|any ?one)\b|麻烦|能否提供"
)

# A question that asks what, how or why (an English question word opening it, a Chinese one anywhere), and one that asks
# what to change ("需要修改什么？": a setting, not an explanation).
_WH_ASK = _rx(r"^\W*(?:how|what|why|which)\b|怎么|如何|为什么|为啥|什么|多少|多大")
_CHANGE = _rx(r"修改|改动|设置|调整|\bchange|\bset\b|\bmodify")


# A clause that only announces a question ("请教一下，", "请问：", "想问一下，", "Hi, I have a question:"): the question
# follows it; on its own it asks nothing and must not stand as the first question.
_ASK_PREAMBLE = _rx(
    r"^[\s,，:：、.。!！~～]*(?:(?:你好|您好|大佬们?|各位)[\s,，:：、.。!！~～]*)?(?:请教|请问|想问|想请教|求助|求教|问一下|打扰)(?:一下|下)?"
    r"(?:各位|大家|大佬们?)?[\s,，:：、.。!！~～]*$|"
    r"^[\s,.:!-]*(?:(?:hi|hello|hey)[\s,.:!-]*)?(?:i have|got|quick) (?:a |one |some )?(?:(?:quick|small|simple) )?questions?[\s,.:!-]*$"
)


# A filled-in line of an issue form or an environment script's printout ("是否支持BF16数字格式: 支持", GLM-4's
# system-info template): the question is the form's and its answer follows the colon, so the user asks nothing.
_FORM_FIELD = re.compile(r"^[^:：?？\n]{0,40}(?:是否|吗)[^:：?？\n]{0,30}[:：][ \t]*[^?？:：\n]{1,24}$", re.M)


def asked_sentences(prose: str) -> list[str]:
    """The sentences of ``prose`` that ask something (see ``_ASK_SENTENCE``), in order; a clause that only announces
    a question ("请教一下，") is read with the clause it announces. A filled-in form line (``_FORM_FIELD``) asks
    nothing."""
    clauses = [s.strip() for s in _SENTENCE_END.split(prose) if s and s.strip() and not _FORM_FIELD.match(s.strip())]
    asks: list[str] = []
    carry = ""
    for clause in clauses:
        # (the preamble carries over a condition before the question: "请教一下，如果不开 offload，两张卡是否支持…？")
        if _ASK_PREAMBLE.search(clause) or (
            carry and not _ASK_SENTENCE.search(clause) and not clause.endswith(("。", "？", "?", "!", "！", "."))
        ):
            carry += clause
            continue
        if carry or _ASK_SENTENCE.search(clause):
            asks.append(carry + clause)
        carry = ""
    return asks + ([carry] if carry else [])


# "Why we force recompute_granularity='selective' when …?", "why do we need to divide the loss by GA?": the generic "we"
# of a design question, not the user's run.
_DESIGN_WHY = _rx(
    r"\bwhy (?:do |would |should |must |did )?we (?:need|force|use|have to|require|set|divide|multiply|scale|want|call)\b"
)
# Whether a setting must change with another ("do we also need to increase the learning rate?", "Does the learning rate
# need to be adjusted with gpus?", "学习率需要进行相应调整吗", "单卡应该除以4吗").
_NEED_CHANGE = _rx(
    r"(?:需要|要不要|需不需要|是否需要|要|应该)(?:相应(?:地)?|跟着|同步)?(?:进行)?(?:相应(?:地)?)?(?:调整|调|修改|改|乘|除|缩放|增大|减小|"
    r"放大|缩小)[^。？?]{0,20}(?<!什)[吗么]|"
    r"\b(?:do|should) (?:i|we) (?:also )?(?:need to )?(?:adjust|change|scale|divide|multiply|increase|decrease|modify|enlarge)\b|"
    r"\b(?:does|do|should) (?:the )?[\w -]{0,30} need to be (?:changed|adjusted|scaled|increased|decreased|modified)\b"
)
# "为啥要求这么高", "why does it need so much": a why about the size of a figure, not about a failure.
_SO_MUCH = _rx(r"这么(?:高|大|多)|那么(?:高|大|多)|\bso (?:much|high|large|big)\b")
# Asking for the cause of something that happened (not why a design is so).
_REASON_ASK = _rx(r"什么原因|啥原因|怎么回事|\bwhat(?:'s| is| was) (?:the )?(?:reason|cause)\b")
# "… lr_scheduler steps 4 times on 4 GPUs, why?": a description that ends in "why" asks about what it described.
_TRAILING_WHY = _rx(r"(?:\bwhy|为啥|为什么|为何)\s*[?？]?\s*$")
_ASK_WORD = _rx(r"[?？]|[吗么呢嘛]|" + _NOT_CONCESSIVE + r"(?:怎么|如何)|\bhow\b|\bwhat\b|\bwhich\b")
_KNOB = _rx(
    r"batch|学习率|learning[-_ ]rate|\blr\b|超参|hyper-?param\w*|gradient[-_ ]accumulation|梯度累[积加]|\bzero\b|offload|"
    r"配置|\bconfig\w*|参数|脚本|\bscript\b|\bsettings?\b|设置"
)
# The one question vocabulary of the engine. A sentence that asks *whether* (a question mark, 吗/么, 会不会, "will it",
# "if …") supposes what it names ("会不会 OOM？" has not hit one: see rag.intents.reports_oom); any question word at
# all (why, how much, 怎么) makes a message a question rather than a bare description of a setup.
_WHETHER = r"[?？吗么]|会不会|是否|能不能|\b(?:will|would|could|whether|if)\b"
_ASKS_WHETHER = _rx(_WHETHER)
_ANY_QUESTION = _rx(
    _WHETHER
    + r"|呢|怎么|如何|为什么|为啥|多少|多大|哪|能否|请问|求|\b(?:how|what|why|which|can|does|do|is|are|should)\b"
)


def asks_whether(sentence: str) -> bool:
    """Whether a sentence asks whether / supposes what it names (rather than reporting it)."""
    return bool(_ASKS_WHETHER.search(sentence))


def asks_anything(text: str) -> bool:
    """Whether a text holds any question at all."""
    return bool(_ANY_QUESTION.search(text))


# A failure named as a possibility in a question that asks whether ("能保证不爆显存吗？", "4张40g的卡也会报错吗？",
# "BF16主要是能防止溢出？", "will it OOM with ZeRO-2?"): supposed, not observed (see :func:`asks_whether`).
_SUPPOSING = _rx(
    r"(?:会|能|可能|保证|避免|防止|以免|免得|导致|造成|降低|减少|缓解)不?[^\s，,。？?]{0,6}$|不\s*$|"
    r"\b(?:will|would|could|might|may|can|cause|causes|lead to|result in)\s+(?:not\s+)?(?:\w+\s+)?$"
)


# A failure named as what to avoid ("so as not to use too much memory", "to prevent CUDA OOM", "防止爆显存") or as a
# risk ("It may cause performance degradation", "可能导致溢出"): a goal or a claim, in any sentence.
_AVOIDING = _rx(
    r"(?:防止|避免|以免|免得|不至于|可能会?(?:导致|造成|引起))\s*[^\s，,。？?]{0,6}$|"
    r"\b(?:may|might|could)\s+(?:cause|lead to|result in|introduce)\s+(?:\w+\s+)?$|"
    r"\b(?:prevent(?:ing)?|avoid(?:ing)?|without|(?:so as |in order )?not to(?: \w+)?)\s+(?:\w+\s+)?$|"
    # a failure denied for a setting ("knowing that the current configuration won't OOM", "这样就不会爆显存")
    r"\b(?:won'?t|wouldn'?t|will not|would not)\s+$|(?<!会)不会\s*$"
)


# "上面的配置有什么需要调整的吗？( 不够或者太少)" (Qwen #846): "not enough" as one side of "too little or too much", a
# sizing question's choice, not a failure the user saw.
_OR_TOO_MUCH = _rx(r"\s*(?:或者?|还是|or)\s*(?:太多|太少|过多|过剩|多余|too (?:much|many|big|large)|more than enough)")


def _supposed_removed(prose: str) -> str:
    """``prose`` with each failure or error named as a possibility in a question that asks whether, or as what to
    avoid, blanked."""

    def blank(sentence: str) -> str:
        supposing = asks_whether(sentence) and not _WHY.search(sentence)

        def keep(m: re.Match[str]) -> str:
            before = m.string[max(0, m.start() - 16) : m.start()]
            if (
                _AVOIDING.search(before)
                or (supposing and _SUPPOSING.search(before))
                or _OR_TOO_MUCH.match(m.string, m.end())
            ):
                return " " * len(m.group(0))
            return m.group(0)

        for pattern in (_SYMPTOM, _ERROR_IN_PROSE):
            sentence = pattern.sub(keep, sentence)
        return sentence

    return "".join(blank(s) for s in _WHOLE_SENTENCE_END.split(prose))


def reports_symptom(prose: str) -> bool:
    """Whether the prose reports something observed (an error, a slowdown, memory that grew), quoted docs aside."""
    return bool(_SYMPTOM.search(_QUOTED_DOC.sub(" ", prose)))


def classify_act(
    parts: list[Part],
    has_diagnosis: bool = False,
    has_misconception: bool = False,
    setup_enough: bool = False,
    previous: Act | None = None,
    follow_up: bool = False,
) -> Act:
    """The act of a message: the rules' verdict (:func:`rule_act`), revised by the trained act model
    (:mod:`rag.act_model`) where its grouped cross-validation showed the model generalises better.

    A short follow-up that keeps the previous act is the rules' call alone (the model saw no conversations).
    Without the model's artifact this is :func:`rule_act`.
    """
    verdict = rule_act(parts, has_diagnosis, has_misconception, setup_enough, previous, follow_up)
    if follow_up and previous is not None and verdict == previous:
        return verdict
    if has_misconception and verdict == "yes_no":
        # A question about a wrong belief the user holds gets the verdict first, whatever the setup lets us
        # compute ("Does mixed precision halve GPU memory for a full fine-tune of llama-2-7b?" is not a fit question).
        return verdict
    from .act_model import revise_act

    revised = revise_act(
        parts,
        verdict,
        has_diagnosis=has_diagnosis,
        has_misconception=has_misconception,
        setup_enough=setup_enough,
    )
    return revised if revised in ACTS else verdict


def rule_act(
    parts: list[Part],
    has_diagnosis: bool = False,
    has_misconception: bool = False,
    setup_enough: bool = False,
    previous: Act | None = None,
    follow_up: bool = False,
) -> Act:
    """The rules' act of a message, from its prose and the kinds of what it pasted.

    ``has_misconception``: the prose touches a known wrong belief (rag.intents), so a question about
    it ("does GA increase memory?", "显存爆掉是因为有效批次吗？") is a yes/no question about a claim.
    ``setup_enough``: a bare description of a setup ("8卡 A100 训练 llama2-13b，zero3，micro batch 4")
    asks, implicitly, how much memory it takes. ``previous`` / ``follow_up``: a short follow-up
    ("那用 ZeRO-3 呢？") keeps the act of the turn it follows.
    """
    prose = _FORM_FIELD.sub(" ", _TAG.sub(" ", _TEMPLATE.sub(" ", prose_of(parts))))
    pasted = {p.kind for p in parts if p.kind != "prose"}
    # What is observed is read without the failures a question only supposes.
    seen = _supposed_removed(prose)
    symptom = bool(_SYMPTOM.search(_QUOTED_DOC.sub(" ", seen)))
    # What the readers found in a launch command or a config alone ("more processes than visible GPUs") is a smell
    # worth a line, not the failure the user reports: it tilts to a diagnosis only with a log or a symptom.
    error_pasted = bool(pasted & {"traceback", "error"}) or (
        has_diagnosis and (bool(pasted & {"log", "nvidia_smi"}) or symptom)
    )
    measured = re.search(r"\d\s*(?:g|gb|gib|mb|mib|%|steps?|步|x\b)|[=:：]\s*\d", prose, re.I)
    observed = symptom and (
        bool(_FIRST_PERSON.search(prose))
        or bool(_NOTICED.search(prose))
        or bool(pasted)
        or bool(measured)
        or bool(_FAILURE.search(seen))
    )
    asks = asked_sentences(prose)
    ask = "\n".join(asks) if asks else prose
    # Whole sentences (commas kept) that ask: "I want to confirm that …, the effective batch size is 8, not 2".
    asked_whole = [s for s in _WHOLE_SENTENCE_END.split(prose) if s.strip() and _ASK_SENTENCE.search(s)]

    # "Am I right?" / "我的理解对吗" checks the user's own claim or hypothesis (yes/no), not an observation.
    tag_checked = bool(_TAG_CHECK.search(_OWN_CLAIM_CHECK.sub(" ", prose)))
    if _IS_NORMAL.search(_OWN_CLAIM_CHECK.sub(" ", prose)) or (
        tag_checked and (observed or bool(pasted) or bool(measured))
    ):
        return "is_normal"
    if follow_up and previous is not None and len(prose) < 80 and not (error_pasted or _WHY.search(prose)):
        return previous
    error_in_prose = bool(_ERROR_IN_PROSE.search(seen))
    # A bare setup typed in chat ("8卡 A100 训练 llama2-13b，zero3，micro batch 4") asks how much memory it takes; an
    # issue that pastes its command, config or log without a question reports what it ran (dev: 0 of 4 were fit).
    if (
        setup_enough
        and not pasted
        and not asks_anything(prose)
        and not error_in_prose
        and len(prose) < 200
        and not symptom
    ):
        return "fit"
    # The first question (often the issue title) asks whether it fits: a fit question, even when an OOM is its motive.
    # Only a sentence that asks counts: "显存不够" or "fits in memory" in a description is the motive, not the question.
    # An issue title that names a requirement ("Hardware requirements for …", "全参数微调资源要求") asks for it.
    title = prose.strip().split("\n", 1)[0].strip()
    title_ask = (
        [title]
        if 0 < len(title) <= 120 and title not in asks and _FIT_QUANTITY.search(title) and not _SYMPTOM.search(title)
        else []
    )
    # ("是因为显存不够吗？", "is it because the memory is not enough?" ask about the cause of what happened.)
    # ("Does mixed precision halve GPU memory for a full fine-tune of llama-2-7b?" asks about a belief the message
    # touches, not whether the run fits: a yes/no question, answered with the belief's verdict.)
    verdict_after = [
        w.strip() for w in asked_whole if _FIT_VERDICT_AFTER.search(w) and (_SIZE.search(w) or _model_on_named_gpu(w))
    ]
    fit_asks = [
        a
        for a in title_ask + verdict_after + asks
        if not (has_misconception and _YES_NO.search(a) and not _FIT_QUANTITY.search(a))
        and (
            a in verdict_after
            or _CAUSE_ASK.search(a) is None
            and _FIT.search(a)
            or (
                _CAUSE_ASK.search(a) is None
                and _FIT_CAN.search(a)
                # (the size may sit in a condition before the clause that asks: "如果只有20g，能跑起来么？")
                and (_SIZE.search(a) or _SIZE.search(_condition_before(a, asked_whole)) or _model_on_named_gpu(a))
                and not _WH.search(a)
            )
            or (_CAUSE_ASK.search(a) is None and _FIT_HOW.search(a) and _MEMORY_SIZE.search(a))
            or bool(_run_before(a, prose))
        )
    ]
    # ("需要多少显存？… 为啥我双卡 A5000 会显存溢出呢", "…报内存不足，请问这是因为什么": next to a failure the user
    # observed, another question asks why — the figure is the motive, the answer is the cause; "为啥要求这么高？" asks
    # about the figure itself.)
    why_failed = observed and any(
        (_WHY.search(a) or _CAUSE_ASK.search(a)) and not (_DESIGN_WHY.search(a) or _SO_MUCH.search(a))
        for a in asks
        if a not in fit_asks
    )
    if (
        (fit_asks or ((not asks or _FIT_QUANTITY.search(prose)) and _FIT.search(prose)))
        and (
            any(_FIT_QUANTITY.search(a) for a in fit_asks)
            or not (error_in_prose or observed)
            or (fit_asks and fit_asks[0] == asks[0] and not error_pasted)
            # every question asks whether it fits ("单卡训练内存爆了，是不是单卡训不了" + the error): the error is the motive
            or (bool(asks) and all(a in fit_asks for a in asks))
        )
        and not why_failed
    ):
        return "fit"
    # (A choice is read in the whole sentence, "8, not 2"; arithmetic only in the clause that asks: "for 8x2=16 batch
    # size, …, should I enlarge the learning rate to 8e-4?" gives the product as context.)
    counts_asked = any(
        pattern.search(a) and _COUNT_WORD.search(a) and not _FAILURE.search(a) and not _CONFIGURE.search(a)
        for pattern, sentences in ((_NUM_ALTERNATIVE, asked_whole), (_ARITHMETIC, asks))
        for a in sentences
    )
    # The first question asks whether a setting must change ("Should I change the learning rate when using multi-node
    # training?", "学习率需要进行相应调整吗", "那么单卡应该除以4吗"): the verdict first, then the value.
    if asks and _NEED_CHANGE.search(asks[0]) and not _WH.search(asks[0]) and not (error_pasted or observed):
        return "yes_no"
    # "My hypothesis is: … Am I right?": the user's own claim is checked (a verdict), even when it is about a setting.
    if _OWN_CLAIM_CHECK.search(prose) and not (error_pasted or observed or counts_asked):
        return "yes_no"
    # Every question asks how to set a training knob ("怎么调整 batch size？", "how should I set the learning rate?"):
    # the error or OOM around it is the motive, the answer is the setting.
    knob_asks = [a for a in asks if _ASK_WORD.search(a)]
    # ("… how I should set the configs … I need a specific z3 config?": the follow-up yes/no about a setting counts too.)
    if (
        knob_asks
        and any(_KNOB.search(a) for a in knob_asks)
        and _CONFIGURE.search(knob_asks[0])
        and all(
            (_CONFIGURE.search(a) or (_KNOB.search(a) and not _WH.search(a) and not _BATCH.search(a)))
            and not (_WHY.search(a) or _SYMPTOM.search(a))
            for a in knob_asks
        )
    ):
        return "configure"
    if error_in_prose and not (_IS_NORMAL.search(prose) or _TAG_CHECK.search(prose)):
        return "diagnose"
    if has_misconception and _YES_NO.search(prose) and not error_pasted and not _FIRST_PERSON.search(prose):
        return "yes_no"
    if error_pasted:
        return "diagnose"
    # A choice between two counts ("256条还是4*256条", "8, not 2") asks for the arithmetic, whatever was observed.
    if counts_asked:
        return "batch_arithmetic"
    # A choice between two values of a knob ("enlarge the learning rate to 8e-4 or just set 1e-4?") asks for the setting.
    if any(_KNOB.search(a) and _VALUE_CHOICE.search(a) for a in asked_whole):
        return "configure"
    if asks and _EFFECT_ASK.search(asks[0]) and not (_SYMPTOM.search(asks[0]) or _WHY.search(asks[0])):
        return "yes_no"
    if (
        _STEPS.search(prose)
        and re.search(r"\d", prose)
        and not symptom
        and (not asks or any(_STEPS.search(a) or _BATCH.search(a) for a in asks))
    ):
        return "batch_arithmetic"
    # "why does X require …" asks for an explanation; "why is my … / why does it OOM" reports something observed.
    # A bare "为什么？" / "why?" asks about what the sentence before it described.
    # Every question asks for a verdict ("Is it possible to mitigate this?", "4张40g的卡 batch 为1也会报错吗？", "can it work
    # with gloo?"): the symptom around it is the motive, the answer is yes or no — unless one asks for help or a fix.
    verdict_only = bool(asks) and all(
        _YES_NO.search(a)
        and _WOULD.search(a)
        and not (_WH.search(a) or _HELP_ASK.search(a) or _TAG_CHECK.search(a) or _PROBLEM_ASK.search(a))
        for a in asks
    )
    if (observed and not verdict_only) or any(
        _WHY.search(a)
        and (
            symptom
            or (_FIRST_PERSON.search(a) and not _DESIGN_WHY.search(a))
            or (len(a) < 12 and _FIRST_PERSON.search(prose))
            or (len(a) > 25 and _TRAILING_WHY.search(a))
            # "微调chatglm-6b占用内存20g以上，什么原因": the cause of a figure the user measured
            or (measured and _REASON_ASK.search(a))
            # "Do you have any ideas on the cause of this problem?" (LISA #81): the cause of what they reported
            or bool(_PROBLEM_CAUSE.search(a))
        )
        for a in asks
    ):
        if any(_BATCH.search(a) for a in asks) and not _WHY.search(prose):
            return "batch_arithmetic"
        # "我训练110条数据，epoch设置为300，为什么step也是300": the question is about a count, not a failure.
        if (
            not _FAILURE.search(prose)
            and _DATA_SIZE.search(prose)
            and any(_STEPS.search(a) and re.search(r"\d", a) and not _SYMPTOM.search(a) for a in asks)
        ):
            return "batch_arithmetic"
        return "diagnose"
    if has_misconception and _YES_NO.search(prose):
        return "yes_no"
    # "和 X 有关吗？为什么 X 越大显存越高？": a why about how something works (no symptom of theirs in it) asks for the
    # mechanism; the yes/no next to it is answered by the explanation.
    if (
        any(_WHY_WORD.search(a) and not _SYMPTOM.search(a) and not _FIRST_PERSON.search(a) for a in asks)
        and not observed
    ):
        return "explain"
    # A step count or batch named in passing ("why does memory grow with the number of steps") is not a question
    # about the arithmetic: only a question that asks for it counts.
    why_asks = [a for a in asks if _WHY.search(a)]
    batch_named = [m.group(0) for m in _BATCH.finditer(prose) if not any(m.group(0) in a for a in why_asks)]
    # A setting asked for ("… want a total batch size of 8, what config shall I set?") beats a batch named outside
    # the questions: the number is the goal, the answer is the setting.
    if any(b in a for b in batch_named for a in asks):
        return "batch_arithmetic"
    # The first question asks what something means or how it works ("batch size auto 是什么意思？…如何手动修改？",
    # "why is that done so? … is it necessary to divide the loss?"): the explanation answers the how-to after it.
    if (
        len(asks) > 1
        and (_EXPLAIN.search(asks[0]) or (_WHY_WORD.search(asks[0]) and not _SYMPTOM.search(asks[0])))
        and not _CONFIGURE.search(asks[0])
        and any(_CONFIGURE.search(a) for a in asks[1:])
    ):
        return "explain"
    if any(_CONFIGURE.search(a) for a in asks):
        return "configure"
    if batch_named:
        return "batch_arithmetic"
    first_question = re.split(r"[?？]", prose)[0]
    # "X or Y?" asks to choose or explain, not for a verdict.
    declarative = any(
        a.rstrip().endswith(("?", "？"))
        and not _WH.search(a)
        and not _TOPIC_TITLE.search(a)
        and not _ALTERNATIVE.search(a)
        and not _YES_NO.search(a)
        and len(a) > 25
        for a in asks
    )
    # A first question that confirms a reading ("batch_size=19200 指的是 A*B*C 这样算出来的吗"): the verdict, even with
    # "指的是" / "means" in it; one that asks what or how ("是什么意思") asks for the explanation.
    last = ([x.strip() for x in _WHOLE_SENTENCE_END.split(first_question) if x.strip()] or [""])[-1]
    confirms = bool(re.search(r"[吗么]\s*$", last) and _READING.search(last) and not _WH.search(last))
    if (
        (_YES_NO.search(prose) or declarative or _TAG_CHECK.search(prose))
        and (confirms or not (_EXPLAIN.search(first_question) or _WHY.search(first_question)))
        and not (
            # a verdict asked along with what or how much ("会增大 token 数量吗？…最大是多少？", "…不变的意思吗？为什么需要保证
            # 乘积不变呢？"): the explanation answers both
            not confirms
            and any(_WH_ASK.search(a) and not (_CONFIGURE.search(a) or _CHANGE.search(a)) for a in asks[1:])
        )
    ):
        return "yes_no"
    if symptom and not _EXPLAIN.search(ask):
        return "diagnose"
    # No question at all, but a claim about the code or the docs ("这里的注释似乎有误", "this may cause performance
    # degradation"): the answer is the verdict on the claim.
    if not asks and _CLAIM.search(prose):
        return "yes_no"
    # No question, but what was run is pasted (a launch command, a config, a log): an issue report of what happened
    # ("使用baichuan2-13B进行微调时出现loss全为0的情况" + its command), whose wording no symptom pattern caught.
    if not asks and pasted & _RUN_PASTES:
        return "diagnose"
    return "explain"
