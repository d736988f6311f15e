<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>BackCheck</name>
    <message>
        <location filename="../backcheck.py" line="82"/>
        <source>Check all</source>
        <translation>全部检查</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="84"/>
        <source>Fix flagged</source>
        <translation>重做已标记</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="86"/>
        <source>Check each segment as it finishes</source>
        <translation>每段生成后自动检查</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="162"/>
        <source>Needs a speech recognizer (Tools › Models…): it hears each segment, scores it against its text and draws the garbled ones again.</source>
        <translation>需要语音识别模型（工具 › 模型…）：它会听每一段，与文本比对打分，并重新生成含糊不清的段落。</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="166"/>
        <source>Hear and score every finished segment not checked yet.</source>
        <translation>听并评分所有尚未检查的已完成段落。</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="167"/>
        <source>Draw the flagged segments again and keep the best take of each.</source>
        <translation>重新生成已标记的段落，每段保留最好的一版。</translation>
    </message>
    <message>
        <location filename="../backcheck.py" line="168"/>
        <source>Hear each segment as it finishes; draw it again while flagged.</source>
        <translation>每段生成后即听一遍；仍被标记时重新生成。</translation>
    </message>
</context>
<context>
    <name>BookActions</name>
    <message>
        <location filename="../book_actions.py" line="67"/>
        <source>Open a book project</source>
        <translation>打开图书项目</translation>
    </message>
    <message>
        <location filename="../book_actions.py" line="74"/>
        <source>Import a book</source>
        <translation>导入图书</translation>
    </message>
    <message>
        <location filename="../book_actions.py" line="76"/>
        <source>Books</source>
        <translation>图书</translation>
    </message>
    <message>
        <location filename="../book_actions.py" line="101"/>
        <source>Exporting…</source>
        <translation>正在导出…</translation>
    </message>
    <message>
        <location filename="../book_actions.py" line="106"/>
        <source>Exported to {0}</source>
        <translation>已导出到 {0}</translation>
    </message>
</context>
<context>
    <name>BookView</name>
    <message>
        <location filename="../views/book_view.py" line="97"/>
        <source>Book</source>
        <translation>图书</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="98"/>
        <source>Chapter</source>
        <translation>章节</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="98"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="98"/>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="99"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="100"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="102"/>
        <source>No book open</source>
        <translation>未打开图书</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="103"/>
        <source>Open a book project, or import an EPUB, TXT or Markdown file.</source>
        <translation>打开一个图书项目，或导入 EPUB、TXT 或 Markdown 文件。</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="118"/>
        <source>No cover</source>
        <translation>无封面</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="119"/>
        <source>the model&apos;s own voice</source>
        <translation>模型自带的声音</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="121"/>
        <source>{0} chapters, {1} characters · voice: {2} · seed {3}</source>
        <translation>{0} 章，{1} 个字符 · 声音：{2} · 种子 {3}</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="137"/>
        <source>Pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="138"/>
        <source>Generating</source>
        <translation>生成中</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="139"/>
        <source>Done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="140"/>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="153"/>
        <source>Finished</source>
        <translation>全部完成</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="155"/>
        <source>Measuring speed…</source>
        <translation>正在测量速度…</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="157"/>
        <source>{0} left at {1:.0f} characters/s</source>
        <translation>剩余 {0}，每秒 {1:.0f} 个字符</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="160"/>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="166"/>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="166"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location filename="../views/book_view.py" line="172"/>
        <source>Load a model first (Tools › Models…).</source>
        <translation>请先加载模型（工具 › 模型…）。</translation>
    </message>
</context>
<context>
    <name>CpuPrecisionBox</name>
    <message>
        <location filename="../views/cpu_settings.py" line="32"/>
        <source>Automatic ({0})</source>
        <translation>自动（{0}）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="33"/>
        <source>Exact (32-bit)</source>
        <translation>精确（32 位）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="35"/>
        <source>bf16 (16-bit)</source>
        <translation>bf16（16 位）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="37"/>
        <source>bf16 (16-bit; emulated on this CPU, slower)</source>
        <translation>bf16（16 位；此 CPU 上为模拟运算，较慢）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="38"/>
        <source>Faster (8-bit weights)</source>
        <translation>更快（8 位权重）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="41"/>
        <source>Used when the model runs on the CPU. Automatic picks bf16 where the processor has native bf16 (AMX or AVX512-BF16) and exact 32-bit elsewhere. 8-bit weights are faster still; the voice is a close approximation of the exact model&apos;s.</source>
        <translation>模型在 CPU 上运行时使用。“自动”在处理器支持原生 bf16（AMX 或 AVX512-BF16）时选用 bf16，否则选用精确的 32 位。8 位权重更快；声音与精确模型的非常接近。</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="47"/>
        <source>Measure on this computer</source>
        <translation>在本机上测速</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="53"/>
        <source>Load a model on this computer first.</source>
        <translation>请先在本机加载模型。</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="56"/>
        <source>Times a few steps of each CPU path on the loaded model (about a minute).</source>
        <translation>用已加载的模型对每种 CPU 方式计时几步（约一分钟）。</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="90"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="91"/>
        <source>Measuring…</source>
        <translation>正在测速…</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="106"/>
        <source>Measuring {0}… {1}%</source>
        <translation>正在测速 {0}… {1}%</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="120"/>
        <source>Measurement stopped.</source>
        <translation>测速已停止。</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="123"/>
        <source>32-bit</source>
        <translation>32 位</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="123"/>
        <source>8-bit weights</source>
        <translation>8 位权重</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="129"/>
        <source>{0}: {1} ms per step</source>
        <translation>{0}：每步 {1} 毫秒</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="131"/>
        <source> ({0}× the speed of Automatic)</source>
        <translation>（速度为“自动”的 {0} 倍）</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="133"/>
        <source>; first steps {0}% away from the exact voice</source>
        <translation>；前几步与精确声音相差 {0}%</translation>
    </message>
    <message>
        <location filename="../views/cpu_settings.py" line="138"/>
        <source>Recommended: {0}. It is selected: OK keeps it.</source>
        <translation>推荐：{0}。已选中，点击“确定”即保存。</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <location filename="../dialogs.py" line="51"/>
        <location filename="../dialogs.py" line="54"/>
        <location filename="../dialogs.py" line="57"/>
        <location filename="../dialogs.py" line="90"/>
        <source>VoxDesk</source>
        <translation>VoxDesk</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="63"/>
        <source>Import a voice</source>
        <translation>导入声音</translation>
    </message>
    <message>
        <location filename="../dialogs.py" line="72"/>
        <source>Open a script</source>
        <translation>打开脚本</translation>
    </message>
    <message>
        <location filename="../dialogs.py"/>
        <source>Audio ({0})</source>
        <translation>音频 ({0})</translation>
    </message>
    <message>
        <location filename="../dialogs.py"/>
        <source>Import subtitles</source>
        <translation>导入字幕</translation>
    </message>
    <message>
        <location filename="../dialogs.py"/>
        <source>Subtitles (*.srt *.vtt)</source>
        <translation>字幕 (*.srt *.vtt)</translation>
    </message>
</context>
<context>
    <name>EngineHost</name>
    <message>
        <location filename="../engine_host.py" line="69"/>
        <source>{0} · {1} GB free</source>
        <translation>{0} · 可用 {1} GB</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="75"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="76"/>
        <source>CPU · {0}</source>
        <translation>CPU · {0}</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="82"/>
        <source>8-bit weights</source>
        <translation>8 位权重</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="86"/>
        <source>chosen in Settings</source>
        <translation>在设置中选择</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="88"/>
        <source>this CPU has {0}</source>
        <translation>此 CPU 支持 {0}</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="90"/>
        <source>no native bf16 on this CPU</source>
        <translation>此 CPU 无原生 bf16</translation>
    </message>
    <message>
        <location filename="../engine_host.py" line="91"/>
        <source>{0}: {1}</source>
        <translation>{0}：{1}</translation>
    </message>
</context>
<context>
    <name>EngineSourceBox</name>
    <message>
        <location filename="../views/api_settings.py" line="26"/>
        <source>Speech engine</source>
        <translation>语音引擎</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="28"/>
        <source>This computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="29"/>
        <source>A speech server</source>
        <translation>语音服务器</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="35"/>
        <source>API key (if the server needs one)</source>
        <translation>API 密钥（如服务器需要）</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="37"/>
        <source>Engine:</source>
        <translation>引擎：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="38"/>
        <source>Server address:</source>
        <translation>服务器地址：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="39"/>
        <source>Server key:</source>
        <translation>服务器密钥：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="52"/>
        <source>Give the speech server&apos;s address, like http://192.168.1.20:8000.</source>
        <translation>请填写语音服务器的地址，例如 http://192.168.1.20:8000。</translation>
    </message>
</context>
<context>
    <name>ExportBookDialog</name>
    <message>
        <location filename="../views/book_dialogs.py" line="43"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="90"/>
        <source>Export the audiobook</source>
        <translation>导出有声书</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="92"/>
        <source>One MP3 per chapter</source>
        <translation>每章一个 MP3 文件</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="93"/>
        <source>One M4B audiobook with chapter marks</source>
        <translation>一个带章节标记的 M4B 有声书</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="103"/>
        <source>Formats:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="105"/>
        <source>Loudness:</source>
        <translation>响度：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="106"/>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="106"/>
        <source>Export folder</source>
        <translation>导出文件夹</translation>
    </message>
</context>
<context>
    <name>ExportDialog</name>
    <message>
        <location filename="../views/export_dialog.py" line="61"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="64"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="73"/>
        <source>One merged audio file</source>
        <translation>合并为一个音频文件</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="75"/>
        <source>One file per segment (in a “_segments” folder)</source>
        <translation>每个片段一个文件（放在“_segments”文件夹中）</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="77"/>
        <source>Subtitles (SRT) matching the merged file</source>
        <translation>与合并文件对应的字幕（SRT）</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="85"/>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="86"/>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="90"/>
        <source>Silence between sentences:</source>
        <translation>句间静音：</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="106"/>
        <source>[pause] tags, paragraph and chapter pauses keep the lengths the script gives them</source>
        <translation>[pause] 标记、段落和章节停顿保持脚本设定的长度</translation>
    </message>
    <message>
        <location filename="../views/export_dialog.py" line="103"/>
        <source>Export to</source>
        <translation>导出到</translation>
    </message>
</context>
<context>
    <name>FailureBar</name>
    <message>
        <location filename="../views/failure_bar.py" line="58"/>
        <source>Details…</source>
        <translation>详情…</translation>
    </message>
    <message>
        <location filename="../views/failure_bar.py" line="59"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../views/failure_bar.py" line="61"/>
        <source>Trim the voice…</source>
        <translation>裁剪声音…</translation>
    </message>
    <message>
        <location filename="../views/failure_bar.py" line="61"/>
        <source>Pick a voice…</source>
        <translation>选择声音…</translation>
    </message>
    <message>
        <location filename="../views/failure_bar.py" line="66"/>
        <source>Segment {0} failed: {1}</source>
        <translation>片段 {0} 失败：{1}</translation>
    </message>
</context>
<context>
    <name>EmotionForm</name>
    <message>
        <location filename="../views/emotion_form.py" line="3"/>
        <source>the voice's own</source>
        <translation>声音自带的情感</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="125"/>
        <source>from another recording</source>
        <translation>取自另一段录音</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="126"/>
        <source>from eight sliders</source>
        <translation>用八个滑块设定</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="127"/>
        <source>from a sentence</source>
        <translation>取自一句描述</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="48"/>
        <source>IndexTTS-2.5 keeps the voice's timbre and takes its emotion from here</source>
        <translation>IndexTTS-2.5 保留声音的音色，情感取自这里</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="52"/>
        <source>A voice from the library: its recording's emotion is copied</source>
        <translation>声音库中的一个声音：照搬其录音中的情感</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="54"/>
        <source>e.g. a quiet, frightened whisper (empty: read from each line)</source>
        <translation>例如：害怕地低声耳语（留空：从每一行文字读出）</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="56"/>
        <source>Describe the emotion in words; the QwenEmotion model turns it into the eight weights</source>
        <translation>用文字描述情感；QwenEmotion 模型会把它换算成八种情感的权重</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="59"/>
        <source>Needs the QwenEmotion model: download IndexTTS-2.5 with it in Models…</source>
        <translation>需要 QwenEmotion 模型：请在“模型…”中下载包含它的 IndexTTS-2.5</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="62"/>
        <source>Weight:</source>
        <translation>权重：</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="63"/>
        <source>How strongly the emotion applies, 0 to 1 (the official emo_alpha)</source>
        <translation>情感的强度，0 到 1（官方的 emo_alpha）</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="96"/>
        <source>How much of this emotion, 0 to 1 (the eight add up to at most 1)</source>
        <translation>这种情感的分量，0 到 1（八项合计最多为 1）</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="70"/>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="71"/>
        <source>Set all eight to 0</source>
        <translation>八项全部设为 0</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="132"/>
        <source>Happy</source>
        <translation>高兴</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="132"/>
        <source>Angry</source>
        <translation>愤怒</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="132"/>
        <source>Sad</source>
        <translation>悲伤</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="132"/>
        <source>Afraid</source>
        <translation>恐惧</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="133"/>
        <source>Disgusted</source>
        <translation>反感</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="133"/>
        <source>Melancholic</source>
        <translation>低落</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="133"/>
        <source>Surprised</source>
        <translation>惊讶</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="133"/>
        <source>Calm</source>
        <translation>平静</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="245"/>
        <source>Total {0} (at most 1):
lower another to raise this one</source>
        <translation>合计 {0}（最多为 1）：
先降低其他项才能调高此项</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="245"/>
        <source>Total {0}
(at most 1)</source>
        <translation>合计 {0}
（最多为 1）</translation>
    </message>
</context>
<context>
    <name>LanguageBox</name>
    <message>
        <location filename="../views/emotion_form.py" line="258"/>
        <source>The language the text is read in; Auto detects it from the text</source>
        <translation>朗读文本所用的语言；“自动”根据文本判断</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="265"/>
        <source>Chinese</source>
        <translation>中文</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="266"/>
        <source>English</source>
        <translation>英语</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="267"/>
        <source>Japanese</source>
        <translation>日语</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="268"/>
        <source>Spanish</source>
        <translation>西班牙语</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="269"/>
        <source>Arabic</source>
        <translation>阿拉伯语</translation>
    </message>
    <message>
        <location filename="../views/emotion_form.py" line="11"/>
        <source>Auto</source>
        <translation>自动</translation>
    </message>
</context>
<context>
    <name>GenerationForm</name>
    <message>
        <location filename="../views/generation_form.py" line="44"/>
        <source>How closely the voice follows the prompt and text (default 2.0)</source>
        <translation>声音贴合提示与文本的程度（默认 2.0）</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="47"/>
        <source>More steps: slightly better audio, slower (default 10)</source>
        <translation>步数越多音质略好、速度越慢（默认 10）</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="49"/>
        <source>VoxCPM2 voice design, e.g. a calm, warm narrator</source>
        <translation>VoxCPM2 声音设计，例如：沉稳温暖的旁白</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="51"/>
        <source>VoxCPM2 only: describe the voice or manner; it is ignored by older models</source>
        <translation>仅 VoxCPM2：描述音色或说话方式；旧模型会忽略</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="55"/>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="57"/>
        <source>Lock one seed for the whole script (same input, same audio), or leave it random</source>
        <translation>为整个脚本固定一个种子（相同输入得到相同音频），或保持随机</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="59"/>
        <source>Guidance (CFG):</source>
        <translation>引导强度（CFG）：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="59"/>
        <source>Quality steps:</source>
        <translation>质量步数：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="62"/>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="63"/>
        <source>Voice design:</source>
        <translation>声音设计：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="1"/>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="1"/>
        <source>This line's speaking rate; “default” uses its voice's rate, or else the script's</source>
        <translation>这一行的语速；“默认”使用其声音的语速，否则使用脚本的语速</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="1"/>
        <source>Speaking rate:</source>
        <translation>语速：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="74"/>
        <source>How to speak, e.g. 请用四川话表达。 or Please say a sentence in a very soft voice.</source>
        <translation>说话方式，例如：请用四川话表达。或 Please say a sentence in a very soft voice.</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="77"/>
        <source>CosyVoice: how to speak (emotion, dialect, speed, volume); the list holds the instructions the model was trained on. Leave it empty to copy the voice as it is.</source>
        <translation>CosyVoice：说话方式（情绪、方言、语速、音量）；列表中是模型训练过的指令。留空则按原样复刻声音。</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="97"/>
        <source>Instruction:</source>
        <translation>指令：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="110"/>
        <source>Emotion:</source>
        <translation>情感：</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="109"/>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
</context>
<context>
    <name>ImportBookDialog</name>
    <message>
        <location filename="../views/book_dialogs.py" line="43"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="60"/>
        <source>Import a book</source>
        <translation>导入图书</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="63"/>
        <source>The model&apos;s own voice</source>
        <translation>模型自带的声音</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="69"/>
        <source>The same seed makes the same audio, also when a run is resumed.</source>
        <translation>相同的种子生成相同的音频，中断后继续生成也一样。</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="72"/>
        <source>Book:</source>
        <translation>图书：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="73"/>
        <source>Voice:</source>
        <translation>声音：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="74"/>
        <source>Seed:</source>
        <translation>种子：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="75"/>
        <source>Project folder:</source>
        <translation>项目文件夹：</translation>
    </message>
    <message>
        <location filename="../views/book_dialogs.py" line="75"/>
        <source>Project folder</source>
        <translation>项目文件夹</translation>
    </message>
</context>
<context>
    <name>LicenseDialog</name>
    <message>
        <location filename="../views/license_dialog.py" line="46"/>
        <source>Licence of {0}</source>
        <translation>{0} 的许可协议</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="1"/>
        <source>{0} comes under the {1}. Read it before VoxDesk downloads or uses the model; your answer is recorded.</source>
        <translation>{0} 采用 {1}。请在 VoxDesk 下载或使用该模型之前阅读；您的选择会被记录。</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="57"/>
        <source>Its text changed since you accepted it on {0}: read it again.</source>
        <translation>自您于 {0} 接受以来，协议文本已更改：请重新阅读。</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="1"/>
        <source>The full text of {0} as the model's publisher ships it (SHA-256 {1}…).</source>
        <translation>模型发布者提供的 {0} 全文（SHA-256 {1}…）。</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="2"/>
        <source>I agree</source>
        <translation>我同意</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="2"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../views/license_dialog.py" line="26"/>
        <source>What it means for you: bilibili grants a worldwide, royalty-free, non-exclusive licence to use the model (2.1). Above 100 million monthly active users or RMB 1 billion annual revenue you need a separate licence from bilibili (2.2). Every copy must keep the copyright notices and this agreement: the model folder keeps its LICENSE file (3.4 b). The model and what it speaks may not be used to improve any other AI model, except IndexTTS itself, its derivatives or non-commercial models (3.4 c). No high-risk use (medical diagnosis, autonomous driving, military, critical infrastructure, biometric surveillance, automated decisions about people, 4.2), and what you make must be lawful (4.1). bilibili may revoke the licence if you breach it (5.1). Chinese law applies, disputes go to arbitration in Shanghai (6); the Chinese text prevails (9).</source>
        <translation>对您意味着什么：bilibili 授予您在全球范围内免版税、非独占地使用该模型的许可（2.1）。若您的产品月活跃用户超过 1 亿或年收入超过 10 亿元人民币，须另行向 bilibili 申请许可（2.2）。每份副本都须保留版权声明和本协议：模型文件夹会保留其 LICENSE 文件（3.4 b）。不得使用该模型及其生成内容改进任何其他 AI 模型，IndexTTS 本身、其衍生品或非商业模型除外（3.4 c）。不得用于高风险场景（医疗诊断、自动驾驶、军事、关键基础设施控制、生物特征监控、对人的自动化决策，4.2），且您生成的内容必须合法（4.1）。若您违约，bilibili 可撤销许可（5.1）。适用中华人民共和国法律，争议提交上海仲裁委员会仲裁（6）；中英文版本不一致时以中文版本为准（9）。</translation>
    </message>
</context>
<context>
    <name>LocalApiBox</name>
    <message>
        <location filename="../views/api_settings.py" line="65"/>
        <source>Local API</source>
        <translation>本地 API</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="67"/>
        <source>Let programs on this computer speak through VoxDesk</source>
        <translation>允许本机上的程序通过 VoxDesk 朗读</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="73"/>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="76"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="84"/>
        <source>Port:</source>
        <translation>端口：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="85"/>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="76"/>
        <source>The model&apos;s own voice</source>
        <translation>模型自带的声音</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="82"/>
        <source>Programs written for OpenAI often ask for its voices by name (alloy, echo, nova, …). They speak in this voice, unless a voice of your library has that name.</source>
        <translation>为 OpenAI 编写的程序常按名称请求其内置声音（alloy、echo、nova 等）。这些请求将使用此声音朗读，除非您的声音库中有同名的声音。</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="100"/>
        <source>OpenAI voice names speak as:</source>
        <translation>OpenAI 声音名称使用：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="86"/>
        <source>Address:</source>
        <translation>地址：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="87"/>
        <source>Requests served:</source>
        <translation>已处理请求：</translation>
    </message>
    <message>
        <location filename="../views/api_settings.py" line="96"/>
        <source>(not running)</source>
        <translation>（未运行）</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main_window.py" line="377"/>
        <location filename="../main_window.py" line="411"/>
        <source>(model voice)</source>
        <translation>（模型自带声音）</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="525"/>
        <source>The model is not loaded yet. Wait for it to finish, or choose one in Models.</source>
        <translation>模型尚未加载。请等待加载完成，或在“模型”中选择一个。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="537"/>
        <source>There is nothing to speak yet. Type some text first.</source>
        <translation>还没有可朗读的内容。请先输入文字。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="257"/>
        <source>Untitled script</source>
        <translation>未命名脚本</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="411"/>
        <source>Segment {0} · voice: {1}</source>
        <translation>片段 {0} · 声音：{1}</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="419"/>
        <source>Log ({0}):</source>
        <translation>日志（{0}）：</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="446"/>
        <source>Drag on the waveform to choose the part to keep, then press “Trim to selection”.</source>
        <translation>在波形上拖动选择要保留的部分，然后点击“裁剪到选区”。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="458"/>
        <source>Which voice should speak the lines tagged [{0}]?</source>
        <translation>标记为 [{0}] 的行应由哪个声音朗读？</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="492"/>
        <source>There is no voice named “{0}”. Import or record it, or fix the [tag].</source>
        <translation>没有名为“{0}”的声音。请导入或录制它，或修改 [标记]。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="542"/>
        <source>Waiting for the model to load…</source>
        <translation>正在等待模型加载…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="550"/>
        <source>Preparing the voices…</source>
        <translation>正在准备声音…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="594"/>
        <source>Segments {0} cannot fit in this model with the voice “{1}”: its recording is {2}, and the model can use up to {3} of it for them. They would fail or be cut short.

Speak anyway? Choose No to trim the voice first.</source>
        <translation>使用声音“{1}”时，片段 {0} 超出了此模型的容量：录音长 {2}，而对这些片段模型最多只能使用 {3}。它们会失败或被截断。

仍要朗读吗？选择“否”先裁剪声音。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="628"/>
        <source>This segment has no take yet: speak it first.</source>
        <translation>此片段还没有生成结果：请先朗读。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="647"/>
        <source>Finished: {0} done, {1} failed</source>
        <translation>已结束：{0} 个完成，{1} 个失败</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="649"/>
        <source>Finished: {0} done</source>
        <translation>已结束：{0} 个完成</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="758"/>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="759"/>
        <source>loading the model</source>
        <translation>正在加载模型</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="760"/>
        <source>reserving memory</source>
        <translation>正在分配内存</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="761"/>
        <source>preparing the GPU</source>
        <translation>正在准备 GPU</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="762"/>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="768"/>
        <source>Waiting for the model to load ({0}%, {1})…</source>
        <translation>正在等待模型加载（{0}%，{1}）…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="799"/>
        <source>Encoding the voice…</source>
        <translation>正在编码声音…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="800"/>
        <source>Generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="822"/>
        <source>Device: not loaded</source>
        <translation>设备：未加载</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="823"/>
        <source>Model: {0}</source>
        <translation>模型：{0}</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="823"/>
        <source>No model</source>
        <translation>无模型</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="825"/>
        <source>Engine: no model</source>
        <translation>引擎：无模型</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="826"/>
        <source>Engine: loading {0}% ({1})</source>
        <translation>引擎：加载中 {0}%（{1}）</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="827"/>
        <source>Engine: ready</source>
        <translation>引擎：就绪</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="828"/>
        <source>Engine: generating</source>
        <translation>引擎：生成中</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="829"/>
        <source>Engine: model failed to load</source>
        <translation>引擎：模型加载失败</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="649"/>
        <source>Every finished take was made with the current settings.</source>
        <translation>所有已完成的结果都是用当前设置生成的。</translation>
    </message>
    <message>
        <location filename="../main_window.py" line="233"/>
        <source>Restored unsaved changes from {0}. Save them with Ctrl+S.</source>
        <translation>已恢复 {0} 时未保存的更改。按 Ctrl+S 保存。</translation>
    </message>
    <message>
        <location filename="../main_window.py"/>
        <source>Stopped: {0} of {1} done, {2} failed</source>
        <translation>已停止：{1} 个中完成 {0} 个，{2} 个失败</translation>
    </message>
    <message>
        <location filename="../main_window.py"/>
        <source>Stopped: {0} of {1} done</source>
        <translation>已停止：{1} 个中完成 {0} 个</translation>
    </message>
    <message>
        <location filename="../main_window.py"/>
        <source>Script</source>
        <translation>脚本</translation>
    </message>
</context>
<context>
    <name>ModelManager</name>
    <message>
        <location filename="../views/model_manager.py" line="53"/>
        <source>SenseVoice Small (Chinese, English, Japanese, Korean, Cantonese)</source>
        <translation>SenseVoice Small（中文、英文、日文、韩文、粤语）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="48"/>
        <source>VoxCPM2 (2B, 30 languages, 48 kHz)</source>
        <translation>VoxCPM2（2B，30 种语言，48 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="49"/>
        <source>VoxCPM1.5 (44.1 kHz)</source>
        <translation>VoxCPM1.5（44.1 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="50"/>
        <source>VoxCPM-0.5B (16 kHz)</source>
        <translation>VoxCPM-0.5B（16 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="51"/>
        <source>Fun-CosyVoice3 (0.5B, 9 languages, 18+ dialects, 24 kHz)</source>
        <translation>Fun-CosyVoice3（0.5B，9 种语言，18 种以上方言，24 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="52"/>
        <source>CosyVoice2 (0.5B, zh/en/ja/ko and dialects, 24 kHz)</source>
        <translation>CosyVoice2（0.5B，中/英/日/韩及方言，24 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="61"/>
        <source>IndexTTS-2.5 (zh/en/ja/es/ar, emotion control, 22 kHz)</source>
        <translation>IndexTTS-2.5（中/英/日/西/阿，情感控制，22 kHz）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="63"/>
        <source>QwenEmotion (emotion from a sentence)</source>
        <translation>QwenEmotion（按一句描述控制情感）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="159"/>
        <source>Read licence…</source>
        <translation>阅读许可…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="216"/>
        <source>Optional:</source>
        <translation>可选：</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="315"/>
        <source>Licence accepted on {0}</source>
        <translation>已于 {0} 接受许可</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="316"/>
        <source>read and accept it before the download</source>
        <translation>下载前请阅读并接受</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="352"/>
        <source>not installed, about {0}</source>
        <translation>未安装，约 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="355"/>
        <source>Add {0}</source>
        <translation>添加 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="465"/>
        <source>Reading the licence from {0}…</source>
        <translation>正在从 {0} 读取许可…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="491"/>
        <source>Licence accepted.</source>
        <translation>已接受许可。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="1"/>
        <source>{0} is installed in {1}.</source>
        <translation>{0} 已安装到 {1}。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="74"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="75"/>
        <source>{0} free on this drive</source>
        <translation>此磁盘剩余 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="94"/>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="103"/>
        <source>VoxDesk needs a speech model before it can speak. Download one below (only this download uses the internet), or choose a folder that already holds a model.</source>
        <translation>VoxDesk 需要语音模型才能朗读。请在下方下载一个（只有这次下载会联网），或选择已包含模型的文件夹。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="115"/>
        <source>Hugging Face (huggingface.co)</source>
        <translation>Hugging Face（huggingface.co）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="116"/>
        <source>Hugging Face mirror</source>
        <translation>Hugging Face 镜像</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="117"/>
        <source>ModelScope (modelscope.cn)</source>
        <translation>魔搭 ModelScope（modelscope.cn）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="131"/>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="133"/>
        <source>Cancel download</source>
        <translation>取消下载</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="136"/>
        <source>Use this model</source>
        <translation>使用此模型</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="138"/>
        <source>Use a folder…</source>
        <translation>使用文件夹…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="139"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="141"/>
        <source>Speech recognition (optional)</source>
        <translation>语音识别（可选）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="144"/>
        <source>Fills in a voice&apos;s transcript from its recording (for the closest likeness) and checks what VoxDesk speaks. {0}, about {1} MB; it runs on this computer.</source>
        <translation>根据录音自动填写声音的原话（以获得最接近的相似度），并检查 VoxDesk 读出的内容。{0}，约 {1} MB；在本机运行。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="151"/>
        <source>Download recognizer</source>
        <translation>下载识别模型</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="293"/>
        <source>{0} comes under the {1} ({2}), which is not a permissive licence. Do you accept it?</source>
        <translation>{0} 采用 {1}（{2}），这不是宽松许可。您是否接受？</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="296"/>
        <source>Licence not accepted: nothing was downloaded.</source>
        <translation>未接受许可：未下载任何内容。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="154"/>
        <source>Use a recognizer folder…</source>
        <translation>使用识别模型文件夹…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="165"/>
        <source>Download from:</source>
        <translation>下载来源：</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="166"/>
        <source>Mirror address:</source>
        <translation>镜像地址：</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="167"/>
        <source>Saved in:</source>
        <translation>保存位置：</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="168"/>
        <source>Free space:</source>
        <translation>可用空间：</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="213"/>
        <source>not downloaded</source>
        <translation>未下载</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="215"/>
        <source>installed</source>
        <translation>已安装</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="216"/>
        <source>partly downloaded: Download resumes it</source>
        <translation>部分下载：点击下载可继续</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="222"/>
        <source> · {0} to download</source>
        <translation> · 需下载 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="224"/>
        <source> · about {0} to download</source>
        <translation> · 约需下载 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="239"/>
        <source>Using {0}</source>
        <translation>正在使用 {0}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="241"/>
        <source>Installed</source>
        <translation>已安装</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="243"/>
        <source>Partly downloaded or damaged: Download resumes or repairs it</source>
        <translation>下载不完整或已损坏：点击下载可继续或修复</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="245"/>
        <source>Not installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="292"/>
        <source>Connecting to {0}…</source>
        <translation>正在连接 {0}…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="299"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="310"/>
        <source>, about {0} min left</source>
        <translation>，约剩 {0} 分钟</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="312"/>
        <source>{0} of {1} · {2}/s{3} · {4}</source>
        <translation>{0} / {1} · {2}/秒{3} · {4}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="321"/>
        <source>Download complete.</source>
        <translation>下载完成。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="329"/>
        <source>Speech recognition is installed.</source>
        <translation>语音识别已安装。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="334"/>
        <source>Choose a speech recognizer folder</source>
        <translation>选择语音识别模型文件夹</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="339"/>
        <source>{0} is not a usable speech recognizer: {1}.</source>
        <translation>{0} 不是可用的语音识别模型：{1}。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="344"/>
        <source>Speech recognition uses {0}.</source>
        <translation>语音识别使用 {0}。</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="360"/>
        <source>Choose a model folder</source>
        <translation>选择模型文件夹</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="367"/>
        <source>{0} is not a usable model folder: {1}</source>
        <translation>{0} 不是可用的模型文件夹：{1}</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py"/>
        <source>Loaded now: {0} ({1})</source>
        <translation>当前已加载：{0}（{1}）</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py"/>
        <source>loaded ✓</source>
        <translation>已加载 ✓</translation>
    </message>
    <message>
        <location filename="../views/model_manager.py" line="179"/>
        <source>Licence:</source>
        <translation>许可证：</translation>
    </message>
</context>
<context>
    <name>PauseForm</name>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>Pauses (ms):</source>
        <translation>停顿（毫秒）：</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>sentence</source>
        <translation>句间</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>paragraph</source>
        <translation>段落</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>chapter</source>
        <translation>章节</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>Silence between sentences and lines</source>
        <translation>句子与行之间的静音</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>Silence after a paragraph (a blank line in the script)</source>
        <translation>段落之后的静音（脚本中的空行）</translation>
    </message>
    <message>
        <location filename="../views/pacing.py" line="1"/>
        <source>Silence before a chapter (a line that starts with # )</source>
        <translation>章节之前的静音（以 # 开头的行）</translation>
    </message>
</context>
<context>
    <name>RateBox</name>
    <message>
        <location filename="../views/pacing.py" line="47"/>
        <source>{0} makes this rate itself instead of stretching the audio afterwards: the speech lasts 1 ÷ rate as long (its duration factor: 1.25× → 0.80×, 0.5× → 2.00×).</source>
        <translation>{0} 由模型自身按此语速生成，而不是事后拉伸音频：语音时长为原来的 1 ÷ 语速（即它的时长系数：1.25× → 0.80×，0.5× → 2.00×）。</translation>
    </message>
</context>
<context>
    <name>Playback</name>
    <message>
        <location filename="../playback.py" line="142"/>
        <source>Output: {0}</source>
        <translation>输出：{0}</translation>
    </message>
    <message>
        <location filename="../playback.py" line="152"/>
        <source>No audio output device: playback is off (export still works).</source>
        <translation>没有音频输出设备：无法播放（仍可导出）。</translation>
    </message>
    <message>
        <location filename="../playback.py" line="156"/>
        <source>Output: the system default device</source>
        <translation>输出：系统默认设备</translation>
    </message>
</context>
<context>
    <name>PronunciationDialog</name>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="34"/>
        <source>Pronunciation</source>
        <translation>发音</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="39"/>
        <source>Find</source>
        <translation>查找</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="40"/>
        <source>Say as</source>
        <translation>读作</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="41"/>
        <source>Regex</source>
        <translation>正则</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="42"/>
        <source>Match case</source>
        <translation>区分大小写</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="43"/>
        <source>Whole word</source>
        <translation>全词匹配</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="44"/>
        <source>On</source>
        <translation>启用</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="52"/>
        <source>Add rule</source>
        <translation>添加规则</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="53"/>
        <source>Remove rule</source>
        <translation>删除规则</translation>
    </message>
    <message>
        <location filename="../views/pronunciation_dialog.py" line="57"/>
        <source>Type a sentence to try the rules on</source>
        <translation>输入一句话试用这些规则</translation>
    </message>
</context>
<context>
    <name>RecordDialog</name>
    <message>
        <location filename="../views/record_dialog.py" line="62"/>
        <source>Record a voice</source>
        <translation>录制声音</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="67"/>
        <source>System default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="77"/>
        <location filename="../views/record_dialog.py" line="136"/>
        <source>My voice</source>
        <translation>我的声音</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="95"/>
        <source>Record</source>
        <translation>录音</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="96"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="97"/>
        <source>Listen</source>
        <translation>试听</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="99"/>
        <source>Keep this voice</source>
        <translation>保存此声音</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="102"/>
        <source>Microphone:</source>
        <translation>麦克风：</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="103"/>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="104"/>
        <source>Stop after:</source>
        <translation>最长录制：</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="111"/>
        <source>Level:</source>
        <translation>音量：</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="152"/>
        <source>Starting in {0}…</source>
        <translation>{0} 秒后开始…</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="155"/>
        <source>Recording: {0:.1f} s of at most {1} s</source>
        <translation>录音中：{0:.1f} 秒（最长 {1} 秒）</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="160"/>
        <source>Recorded {0:.1f} s.</source>
        <translation>已录制 {0:.1f} 秒。</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py" line="162"/>
        <source>Press Record, wait for the countdown, then speak.</source>
        <translation>点击“录音”，倒计时结束后开始说话。</translation>
    </message>
    <message>
        <location filename="../views/record_dialog.py"/>
        <source>Read a few sentences in your normal voice, in a quiet room. {0}–{1} seconds of clear speech works best. Type what you said as the transcript afterwards for the closest match.</source>
        <translation>请在安静的房间里用平常的声音读几句话，{0}–{1} 秒清晰的语音效果最好。录完后把所说内容填为文本，可获得最接近的效果。</translation>
    </message>
</context>
<context>
    <name>ReferenceGuide</name>
    <message>
        <location filename="../views/reference_guide.py" line="88"/>
        <source>Load a model to see how much of this recording it can use.</source>
        <translation>加载模型后即可查看它能使用这段录音的多少。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py" line="91"/>
        <source>This model cannot use any recording for this script: shorten the longest sentence.</source>
        <translation>对于此脚本，此模型无法使用任何录音：请缩短最长的句子。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py" line="98"/>
        <source>The selection ({0}) is longer: trim it to {1} or less.</source>
        <translation>选区（{0}）过长：请裁剪到 {1} 以内。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py"/>
        <source>This model uses up to {0} of the recording for this script; {1}–{2} s is best.</source>
        <translation>对于此脚本，此模型最多使用录音的 {0}；{1}–{2} 秒最佳。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py"/>
        <source>This model uses the first {0} of the recording, whatever the script; {1}–{2} s is best.</source>
        <translation>无论脚本如何，此模型都只使用录音的前 {0}；{1}–{2} 秒最佳。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py"/>
        <source>The selection is {0}; what follows its first {1} is not used.</source>
        <translation>选区为 {0}；前 {1} 之后的部分不会被使用。</translation>
    </message>
    <message>
        <location filename="../views/reference_guide.py"/>
        <source>It needs no transcript.</source>
        <translation>无需填写录音的原话。</translation>
    </message>
</context>
<context>
    <name>Screenshot</name>
    <message>
        <location filename="../screenshot_feedback.py" line="79"/>
        <source>screenshot capture (no sound card)</source>
        <translation>截图采集（无声卡）</translation>
    </message>
</context>
<context>
    <name>ScriptFiles</name>
    <message>
        <location filename="../script_files.py" line="41"/>
        <source>New script</source>
        <translation>新建脚本</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="42"/>
        <source>Open script…</source>
        <translation>打开脚本…</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="1"/>
        <source>Recent scripts</source>
        <translation>最近的脚本</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="46"/>
        <source>Save script</source>
        <translation>保存脚本</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="47"/>
        <source>Save script as…</source>
        <translation>脚本另存为…</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="48"/>
        <source>Save as self-contained project…</source>
        <translation>另存为独立项目…</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="59"/>
        <source>This script was never saved. Save it before closing it?</source>
        <translation>此脚本从未保存。关闭前要保存吗？</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="61"/>
        <source>“{0}” has unsaved changes. Save them before closing it?</source>
        <translation>“{0}”有未保存的更改。关闭前要保存吗？</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="118"/>
        <source>“{0}” has new takes that are not saved in it yet. Save it before closing it?</source>
        <translation>“{0}”有尚未保存到其中的新生成结果。关闭前要保存吗？</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="60"/>
        <source>The last script, {0}, could not be reopened: {1}</source>
        <translation>无法重新打开上次的脚本 {0}：{1}</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="62"/>
        <source>Reopened {0}, the last script</source>
        <translation>已重新打开上次的脚本 {0}</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="48"/>
        <source>Save as self-contained project</source>
        <translation>另存为独立项目</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="123"/>
        <source>Saved {0} with its takes in the folder {1} beside it</source>
        <translation>已保存 {0}，生成结果放在它旁边的文件夹 {1} 中</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="123"/>
        <source>Saved {0}</source>
        <translation>已保存 {0}</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="155"/>
        <source>{0} (not found)</source>
        <translation>{0}（找不到）</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="162"/>
        <source>No recent scripts</source>
        <translation>没有最近的脚本</translation>
    </message>
    <message>
        <location filename="../script_files.py" line="164"/>
        <source>Clear recent scripts</source>
        <translation>清除最近的脚本</translation>
    </message>
</context>
<context>
    <name>ScriptEditor</name>
    <message>
        <location filename="../views/script_editor.py" line="147"/>
        <source>Default voice:</source>
        <translation>默认声音：</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="148"/>
        <source>Pronunciation…</source>
        <translation>发音…</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="149"/>
        <source>Read numbers as words</source>
        <translation>把数字读成文字</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="152"/>
        <source>Numbers, dates, times, money, units and symbols are spoken as words (after the pronunciation list), as the official VoxCPM normalizer reads them</source>
        <translation>数字、日期、时间、金额、单位和符号会读成文字（在发音表之后处理），与官方 VoxCPM 规范化的读法一致</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="165"/>
        <source>Script settings</source>
        <translation>脚本设置</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="166"/>
        <source>Segments</source>
        <translation>片段</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="227"/>
        <source>pick a voice</source>
        <translation>选择一个声音</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="230"/>
        <source>create “{0}”</source>
        <translation>创建“{0}”</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="232"/>
        <source>No voice is named [{0}]:</source>
        <translation>没有名为 [{0}] 的声音：</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="264"/>
        <source>(no voice: the model&apos;s own)</source>
        <translation>（不使用声音：模型自带）</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py"/>
        <source>change</source>
        <translation>更改</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py"/>
        <source>remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py"/>
        <source>[{0}] → {1}</source>
        <translation>[{0}] → {1}</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>Type or paste your script here. Start a line with [Voice name] to have another voice speak it, e.g.
[Anna] Hello there!
[pause 800ms] or [pause 1.5s] adds a pause, a blank line a paragraph pause, and a line that starts with # (a heading) starts a chapter.</source>
        <translation>在此输入或粘贴脚本。在行首写 [声音名称] 可让另一个声音朗读该行，例如：
[Anna] 你好！
[pause 800ms] 或 [pause 1.5s] 插入停顿，空行是段落停顿，以 # 开头的行（标题）开始新的一章。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>Sentences become segments. Tag a line with [Voice] for dialogue, [pause 1s] for a pause, # for a chapter; Ctrl+Enter speaks.</source>
        <translation>每个句子成为一个片段。用 [声音] 标记行可制作对话，[pause 1s] 插入停顿，# 开始新的一章；Ctrl+Enter 朗读。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>Speaking rate:</source>
        <translation>语速：</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>How fast the script is spoken, 0.5× to 2.0×, pitch unchanged. A voice's own rate (voice panel) and a line's (Segment settings…) win over it.</source>
        <translation>脚本的朗读速度，0.5× 到 2.0×，音高不变。声音自己的语速（声音面板）和某一行的语速（片段设置…）优先于它。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>{0} is not a pause: write [pause 800ms] or [pause 1.5s].</source>
        <translation>{0} 不是停顿标记：请写成 [pause 800ms] 或 [pause 1.5s]。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>[Anna|angry] or [Anna|happy 0.5, surprised 0.3] gives a line an emotion; [Anna|@Bob] takes it from Bob's recording, [Anna|"a quiet whisper"] from a description, [|sad] keeps the default voice.</source>
        <translation>[Anna|愤怒] 或 [Anna|高兴 0.5，惊讶 0.3] 为一行指定情感；[Anna|@Bob] 取 Bob 录音中的情感，[Anna|“轻声耳语”] 按文字描述取情感，[|悲伤] 沿用默认声音。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>[Voice|angry] gives a line an emotion.</source>
        <translation>[声音|愤怒] 为一行指定情感。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>The emotion in {0} cannot be read: {1}</source>
        <translation>无法识别 {0} 中的情感：{1}</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>IndexTTS-2.5 speaks emotions; this model ignores tags such as {0}.</source>
        <translation>IndexTTS-2.5 才能表达情感；当前模型会忽略 {0} 这类情感标记。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>{0} describes an emotion in words, which needs the QwenEmotion model this folder lacks: install it from the Models page, or name the emotion (angry 0.6).</source>
        <translation>{0} 用文字描述情感，这需要 QwenEmotion 模型，而此模型文件夹中没有：请在“模型”页面安装它，或直接写出情感名称（如 愤怒 0.6）。</translation>
    </message>
    <message>
        <location filename="../views/script_editor.py" line="1"/>
        <source>No voice is named [{0}] for {1}: import one by that name or change the tag.</source>
        <translation>{1} 需要名为 [{0}] 的声音，但没有这个声音：请导入一个同名声音，或修改标记。</translation>
    </message>
</context>
<context>
    <name>SegmentSettingsDialog</name>
    <message>
        <location filename="../views/generation_form.py" line="122"/>
        <source>Segment settings</source>
        <translation>片段设置</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="123"/>
        <source>Use its own settings for this segment</source>
        <translation>此片段使用单独设置</translation>
    </message>
    <message>
        <location filename="../views/generation_form.py" line="129"/>
        <source>Keep this take&apos;s seed:</source>
        <translation>保留这次生成的种子：</translation>
    </message>
</context>
<context>
    <name>SegmentTable</name>
    <message>
        <location filename="../views/segment_table.py" line="96"/>
        <source>Voice</source>
        <translation>声音</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="96"/>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="96"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="96"/>
        <source>Length</source>
        <translation>时长</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="97"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="134"/>
        <source>{0} · take {1} of {2}</source>
        <translation>{0} · 第 {1} 版（共 {2} 版）</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="136"/>
        <source>{0} · take {1}</source>
        <translation>{0} · 第 {1} 次生成</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="145"/>
        <source>Failed: {0}</source>
        <translation>失败：{0}</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="148"/>
        <source>Queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="149"/>
        <source>Generating {0}%</source>
        <translation>生成中 {0}%</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="150"/>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="163"/>
        <source>Being heard by the speech recognizer…</source>
        <translation>语音识别中…</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="164"/>
        <source>Heard: “{0}”</source>
        <translation>听到：“{0}”</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="164"/>
        <source>Nothing was heard.</source>
        <translation>什么也没听到。</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="167"/>
        <source>Above the threshold: Fix flagged draws it again.</source>
        <translation>超过阈值：“重做已标记”会重新生成它。</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="187"/>
        <source>The back-check heard {0} takes and kept the one with the fewest errors.</source>
        <translation>回听检查听了 {0} 版，保留了错误最少的一版。</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="190"/>
        <source>Drawn again: an earlier take ran on far longer than its text.</source>
        <translation>已重新生成：之前的结果远长于文本。</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="208"/>
        <source>Details…</source>
        <translation>详情…</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="145"/>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="151"/>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="192"/>
        <source>Seed {0}</source>
        <translation>种子 {0}</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="204"/>
        <source>Keep this take&apos;s seed</source>
        <translation>保留这次生成的种子</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="205"/>
        <source>Segment settings…</source>
        <translation>片段设置…</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="139"/>
        <source>Made with {0} · Regenerate to apply</source>
        <translation>用 {0} 生成 · 重新生成以应用</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="195"/>
        <source>This take was made with {0}. It plays and exports as it is; Speech › Regenerate stale takes makes it again with the settings now.</source>
        <translation>这个结果是用 {0} 生成的。它仍可照原样播放和导出；“朗读 › 重新生成过期的结果”会用现在的设置重新生成。</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="220"/>
        <source>Regenerate stale takes</source>
        <translation>重新生成过期的结果</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Play the selected segment (double-click a row)</source>
        <translation>播放所选片段（或双击该行）</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Generate the selected segment again with the same seed</source>
        <translation>用相同种子重新生成所选片段</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>New take</source>
        <translation>换一版</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Generate the selected segment again with a new seed</source>
        <translation>用新种子重新生成所选片段</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Regenerating keeps this take: its seed becomes the segment&apos;s own (marked *)</source>
        <translation>重新生成时保留这一版：它的种子成为此片段自己的种子（标记为 *）</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>This segment&apos;s own settings and seed</source>
        <translation>此片段自己的设置和种子</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>Why this segment failed, with the log line</source>
        <translation>此片段失败的原因及日志行</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py"/>
        <source>*: this segment has its own settings or a kept seed (Segment settings…)</source>
        <translation>*：此片段有自己的设置或保留的种子（片段设置…）</translation>
    </message>
    <message>
        <location filename="../views/segment_table.py" line="287"/>
        <source>Emotion: {0}</source>
        <translation>情感：{0}</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../views/settings_dialog.py" line="44"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="49"/>
        <source>Automatic (GPU when available)</source>
        <translation>自动（有 GPU 时使用 GPU）</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="50"/>
        <source>GPU (CUDA)</source>
        <translation>GPU（CUDA）</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="51"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="65"/>
        <source>No model chosen yet</source>
        <translation>尚未选择模型</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="66"/>
        <source>Change…</source>
        <translation>更改…</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="72"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="83"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="84"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="90"/>
        <source>A take is flagged when more than this share of its words (or characters) is misheard.</source>
        <translation>一版中听错的词（或字）超过此比例时即被标记。</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="95"/>
        <source>Most takes of a flagged segment, the first included.</source>
        <translation>被标记段落最多生成的版数（含第一版）。</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="98"/>
        <source>Model folder:</source>
        <translation>模型文件夹：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="99"/>
        <source>Compute device:</source>
        <translation>计算设备：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="100"/>
        <source>On the CPU:</source>
        <translation>在 CPU 上：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="101"/>
        <source>Export folder:</source>
        <translation>导出文件夹：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="102"/>
        <source>Microphone:</source>
        <translation>麦克风：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="103"/>
        <source>Speakers:</source>
        <translation>扬声器：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="104"/>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="105"/>
        <source>Theme:</source>
        <translation>主题：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="106"/>
        <source>Back-check threshold:</source>
        <translation>回听检查阈值：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="107"/>
        <source>Back-check takes:</source>
        <translation>回听检查版数：</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="126"/>
        <source>System default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="140"/>
        <source>Export folder</source>
        <translation>导出文件夹</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="148"/>
        <source>Choose a model folder</source>
        <translation>选择模型文件夹</translation>
    </message>
    <message>
        <location filename="../views/settings_dialog.py" line="154"/>
        <source>{0} is not a usable model folder: {1}</source>
        <translation>{0} 不是可用的模型文件夹：{1}</translation>
    </message>
</context>
<context>
    <name>StaleTakes</name>
    <message>
        <location filename="../stale_takes.py" line="20"/>
        <source>CFG {0}</source>
        <translation>CFG {0}</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="22"/>
        <source>{0} steps</source>
        <translation>{0} 步</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="24"/>
        <source>other pronunciation or voice design</source>
        <translation>其他发音规则或声音设计</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="26"/>
        <source>numbers read as words</source>
        <translation>数字读作文字</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="26"/>
        <source>numbers as written</source>
        <translation>数字按原样</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="28"/>
        <source>another model</source>
        <translation>另一个模型</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="28"/>
        <source>voice {0}</source>
        <translation>声音 {0}</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="30"/>
        <source>the model&apos;s own voice</source>
        <translation>模型自带的声音</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="30"/>
        <source>seed {0}</source>
        <translation>种子 {0}</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="1"/>
        <source>emotion {0}</source>
        <translation>情感 {0}</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="1"/>
        <source>no emotion</source>
        <translation>无情感</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="1"/>
        <source>other settings</source>
        <translation>其他设置</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="1"/>
        <source>rate {0}×</source>
        <translation>语速 {0}×</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="34"/>
        <source>instruction “{0}”</source>
        <translation>指令“{0}”</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="36"/>
        <source>no instruction</source>
        <translation>无指令</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="42"/>
        <source>language {0}</source>
        <translation>语言 {0}</translation>
    </message>
    <message>
        <location filename="../stale_takes.py" line="44"/>
        <source>language detected from the text</source>
        <translation>根据文本判断的语言</translation>
    </message>
</context>
<context>
    <name>TransportBar</name>
    <message>
        <location filename="../views/transport.py" line="67"/>
        <source>Speak</source>
        <translation>朗读</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="68"/>
        <source>Speak the whole script (Ctrl+Enter)</source>
        <translation>朗读整个脚本（Ctrl+Enter）</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="69"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="70"/>
        <source>Stop generating and playing (Esc)</source>
        <translation>停止生成和播放（Esc）</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="72"/>
        <source>Export WAV, FLAC, per-segment files and subtitles (Ctrl+E)</source>
        <translation>导出 WAV、FLAC、分段文件和字幕（Ctrl+E）</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="83"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="83"/>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="84"/>
        <source>Play or pause (Space, Ctrl+P)</source>
        <translation>播放或暂停（空格、Ctrl+P）</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="91"/>
        <source>{0} done</source>
        <translation>{0} 个完成</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="94"/>
        <source>{0} failed</source>
        <translation>{0} 个失败</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="95"/>
        <source>show</source>
        <translation>查看</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="97"/>
        <source>{0} left of {1}</source>
        <translation>共 {1} 个，剩 {0} 个</translation>
    </message>
    <message>
        <location filename="../views/transport.py" line="105"/>
        <source>{0} · about {1} left</source>
        <translation>{0} · 约剩 {1}</translation>
    </message>
    <message>
        <location filename="../views/transport.py"/>
        <source>Export audio…</source>
        <translation>导出音频…</translation>
    </message>
</context>
<context>
    <name>ImportStatus</name>
    <message>
        <location filename="../views/import_status.py" line="52"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../views/import_status.py" line="53"/>
        <source>Stop importing (Esc); the library stays as it was</source>
        <translation>停止导入（Esc），声音库保持原样</translation>
    </message>
    <message>
        <location filename="../views/import_status.py" line="72"/>
        <source>Saving the recording “{0}”…</source>
        <translation>正在保存录音“{0}”…</translation>
    </message>
    <message>
        <location filename="../views/import_status.py" line="75"/>
        <source>Importing “{0}”… {1:.0f}%</source>
        <translation>正在导入“{0}”… {1:.0f}%</translation>
    </message>
    <message>
        <location filename="../views/import_status.py" line="79"/>
        <source>{0} · about {1} left</source>
        <translation>{0} · 约剩 {1}</translation>
    </message>
    <message>
        <location filename="../views/import_status.py" line="81"/>
        <source>{0} ({1} more waiting)</source>
        <translation>{0}（另有 {1} 个在等待）</translation>
    </message>
</context>
<context>
    <name>LoRARow</name>
    <message>
        <location filename="../views/lora_row.py" line="48"/>
        <source>Attach LoRA…</source>
        <translation>附加 LoRA…</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="51"/>
        <source>Speak this voice with a LoRA fine-tuned on its speaker: choose the folder the trainer wrote.</source>
        <translation>用针对此说话人微调的 LoRA 朗读此声音：选择训练程序写出的文件夹。</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="54"/>
        <source>Remove LoRA</source>
        <translation>移除 LoRA</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="60"/>
        <source>Checking the LoRA…</source>
        <translation>正在检查 LoRA…</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="62"/>
        <source>LoRA: {0}</source>
        <translation>LoRA：{0}</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="64"/>
        <source>No LoRA: the recording alone sets the voice.</source>
        <translation>无 LoRA：仅由录音决定声音。</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="73"/>
        <source>Choose the LoRA folder (lora_weights and lora_config.json)</source>
        <translation>选择 LoRA 文件夹（含 lora_weights 与 lora_config.json）</translation>
    </message>
    <message>
        <location filename="../views/lora_row.py" line="102"/>
        <source>Remove the LoRA “{0}” from the voice “{1}”? Its copy in the library is deleted.</source>
        <translation>要从声音“{1}”移除 LoRA“{0}”吗？声音库中的副本将被删除。</translation>
    </message>
</context>
<context>
    <name>VoicePanel</name>
    <message>
        <location filename="../views/voice_panel.py" line="204"/>
        <source>Voices</source>
        <translation>声音库</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="205"/>
        <source>Selected voice</source>
        <translation>当前声音</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="206"/>
        <source>Record…</source>
        <translation>录音…</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="207"/>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="208"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="210"/>
        <source>Re-encode</source>
        <translation>重新编码</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="212"/>
        <source>Forget this voice&apos;s cached encoding: the next Speak encodes its recording again.</source>
        <translation>清除此声音缓存的编码：下次朗读时会重新编码录音。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="221"/>
        <source>Trim silence</source>
        <translation>裁掉静音</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="222"/>
        <source>Cut the silence before and after the speech</source>
        <translation>裁掉语音前后的静音</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="223"/>
        <source>Normalise loudness</source>
        <translation>响度标准化</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="224"/>
        <source>Bring the speech to a standard loudness, without clipping</source>
        <translation>把语音调到标准响度，不削波</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="225"/>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="226"/>
        <source>Undo the last trim or loudness change (Ctrl+Z)</source>
        <translation>撤销上一次裁剪或响度调整（Ctrl+Z）</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="231"/>
        <source>Recognize words</source>
        <translation>识别原话</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="232"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="343"/>
        <source>{0} in use of {1} · selection {2}{3}</source>
        <translation>使用 {0} / 共 {1} · 选区 {2}{3}</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="579"/>
        <source>Replace the transcript you typed with the words recognized in the recording?</source>
        <translation>用录音中识别出的内容替换你输入的原话吗？</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="610"/>
        <source>Recognized “{0}”; your transcript was kept.</source>
        <translation>识别结果为“{0}”；已保留你的原话。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="630"/>
        <source>Recognition cancelled; type the words, or press Recognize words.</source>
        <translation>识别已取消；请输入原话，或点击“识别原话”。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="651"/>
        <source>Recognizing the words spoken… {0:.0f}%</source>
        <translation>正在识别录音中的原话… {0:.0f}%</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="657"/>
        <source>Recognized automatically: listen, and correct any word that is wrong.</source>
        <translation>已自动识别：请试听，并改正识别错误的字词。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="660"/>
        <source>Speech recognition is not installed. With it (Models… → Speech recognition), VoxDesk fills in the words spoken in a new recording for the closest likeness.</source>
        <translation>未安装语音识别。安装后（模型… → 语音识别），VoxDesk 会自动填写新录音中的原话，以获得最接近的相似度。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="667"/>
        <source>Download a speech recognizer in Models… to use this.</source>
        <translation>请先在“模型…”中下载语音识别模型。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="209"/>
        <location filename="../views/voice_panel.py" line="517"/>
        <source>Play voice</source>
        <translation>播放声音</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="219"/>
        <source>Play selection</source>
        <translation>播放选区</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="216"/>
        <source>Drag across the waveform to select a part; drag the handles to adjust it.</source>
        <translation>在波形上拖动即可选择一段；拖动两端的手柄可调整。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="220"/>
        <source>Trim to selection</source>
        <translation>裁剪到选区</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="227"/>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="228"/>
        <source>Transcript (the exact words spoken, optional):</source>
        <translation>文本（录音中说的原话，可选）：</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="229"/>
        <source>e.g. Hello, this is my voice.</source>
        <translation>例如：你好，这是我的声音。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="230"/>
        <source>Tip: drop audio files here to import them.</source>
        <translation>提示：把音频文件拖到这里即可导入。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="341"/>
        <source>, normalised</source>
        <translation>，已标准化</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="510"/>
        <source>The voice will be encoded again at the next Speak.</source>
        <translation>下次朗读时会重新编码这个声音。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="517"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="371"/>
        <source>Mode: continuation. The model carries on from this recording and its transcript, for the closest likeness. The transcript must match the words exactly.</source>
        <translation>模式：续写。模型接着这段录音及其文本继续说，相似度最高。文本必须与录音内容完全一致。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="375"/>
        <source>Mode: reference (VoxCPM2). The recording alone sets the voice. Type the exact words spoken to use continuation mode for a closer likeness.</source>
        <translation>模式：参考（VoxCPM2）。仅凭录音确定音色。填写录音中的原话可改用续写模式，相似度更高。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="442"/>
        <source>Mode: reference. The recording alone sets the voice; this model reads no transcript.</source>
        <translation>模式：参考。仅凭录音确定音色；此模型不读取录音的原话。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="441"/>
        <source>Delete the voice “{0}”? Its recording is removed from the library.</source>
        <translation>删除声音“{0}”？其录音将从声音库中移除。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py"/>
        <source>⚠ This reference is {0} s long; {1}–{2} s of clear speech gives the same likeness and every segment starts faster. Trim it to the best part.</source>
        <translation>⚠ 这段参考录音长 {0} 秒；{1}–{2} 秒清晰的语音就能达到同样的相似度，而且每个片段开始得更快。请裁剪出其中最好的部分。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="454"/>
        <source>Discard the recording “{0}”? It is not saved yet.</source>
        <translation>丢弃录音“{0}”？它还没有保存。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="489"/>
        <source>Import of “{0}” cancelled; the voice library is unchanged.</source>
        <translation>已取消导入“{0}”，声音库没有改变。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="491"/>
        <source>{1} imports cancelled (“{0}” and more); the voice library is unchanged.</source>
        <translation>已取消 {1} 个导入（“{0}”等），声音库没有改变。</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="1"/>
        <source>script's</source>
        <translation>随脚本</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="1"/>
        <source>Speaking rate:</source>
        <translation>语速：</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="1"/>
        <source>How fast this voice speaks in scripts; “script's” follows the script's rate</source>
        <translation>这个声音在脚本中的朗读速度；“随脚本”使用脚本的语速</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="282"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="284"/>
        <source>LoRA: {0}</source>
        <translation>LoRA：{0}</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="62"/>
        <source>Train this voice…</source>
        <translation>训练这个声音…</translation>
    </message>
    <message>
        <location filename="../views/voice_panel.py" line="236"/>
        <source>Fine-tune the model on recordings of this voice for a closer likeness (needs a GPU)</source>
        <translation>用这个声音的录音微调模型，让声音更像（需要 GPU）</translation>
    </message>
</context>
<context>
    <name>WindowActions</name>
    <message>
        <location filename="../window_actions.py" line="71"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="77"/>
        <source>Export audio…</source>
        <translation>导出音频…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="79"/>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="80"/>
        <source>&amp;Speech</source>
        <translation>朗读(&amp;S)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="82"/>
        <source>Speak</source>
        <translation>朗读</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="83"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="84"/>
        <source>Play / pause</source>
        <translation>播放 / 暂停</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="90"/>
        <source>&amp;Voices</source>
        <translation>声音(&amp;V)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="95"/>
        <source>&amp;Tools</source>
        <translation>工具(&amp;T)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="96"/>
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="98"/>
        <source>Pronunciation…</source>
        <translation>发音…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="100"/>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="101"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="102"/>
        <source>Open the log folder</source>
        <translation>打开日志文件夹</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="103"/>
        <source>About VoxDesk</source>
        <translation>关于 VoxDesk</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="200"/>
        <source>{0} of {1} segments failed ({2}).</source>
        <translation>{1} 个片段中有 {0} 个失败（{2}）。</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="202"/>
        <source>{0} of {1} segments are not generated yet.</source>
        <translation>{1} 个片段中有 {0} 个尚未生成。</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="203"/>
        <source>Export the {0} finished ones?</source>
        <translation>导出已完成的 {0} 个片段吗？</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="171"/>
        <source>There is no audio to export yet. Press Speak first.</source>
        <translation>还没有可导出的音频。请先点击“朗读”。</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="210"/>
        <source>Replace the existing files? ({0})</source>
        <translation>替换已有文件吗？（{0}）</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="232"/>
        <source>Exported {0} file(s) to {1}</source>
        <translation>已导出 {0} 个文件到 {1}</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="240"/>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="345"/>
        <source>The new language is used after you restart VoxDesk.</source>
        <translation>重新启动 VoxDesk 后将使用新语言。</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="364"/>
        <source>Version {0}</source>
        <translation>版本 {0}</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="367"/>
        <source>VoxDesk clones a voice and speaks any text in it, entirely on this computer. Nothing is uploaded; the only network use is a model download you start yourself.</source>
        <translation>VoxDesk 克隆一个声音并用它朗读任意文本，全部在本机完成。不会上传任何内容；唯一的联网操作是您亲自发起的模型下载。</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="85"/>
        <source>Regenerate stale takes</source>
        <translation>重新生成过期的结果</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Record…</source>
        <translation>录音…</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>The new language is used after VoxDesk restarts. Restart now?

Your script is kept: VoxDesk closes as usual and opens it again.</source>
        <translation>新语言在 VoxDesk 重新启动后生效。现在重新启动吗？

你的脚本会保留：VoxDesk 照常关闭后会再次打开它。</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Import subtitles…</source>
        <translation>导入字幕…</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Open book…</source>
        <translation>打开图书…</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Import book…</source>
        <translation>导入图书…</translation>
    </message>
    <message>
        <location filename="../window_actions.py"/>
        <source>Train this voice…</source>
        <translation>训练这个声音…</translation>
    </message>
    <message>
        <location filename="../window_actions.py" line="303"/>
        <source>VoxDesk is still speaking with the current model. Switching the model stops it; the takes already finished are kept. Switch now?</source>
        <translation>VoxDesk 仍在用当前模型朗读。切换模型会停止朗读；已完成的片段会保留。现在切换吗？</translation>
    </message>
</context>
<context>
    <name>Dubbing</name>
    <message>
        <location filename="../dubbing.py"/>
        <source>A dub is running: stop it before importing other subtitles.</source>
        <translation>配音正在进行：请先停止，再导入其他字幕。</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>(model voice)</source>
        <translation>（模型自带声音）</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>Subtitles</source>
        <translation>字幕</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>The model is not loaded yet. Wait for it to finish, or choose one in Models.</source>
        <translation>模型尚未加载。请等待加载完成，或在“模型”中选择一个。</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>Export the dub into a folder</source>
        <translation>将配音导出到文件夹</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>{0} already holds a dub ({1} files). Replace it?</source>
        <translation>{0} 中已有配音（{1} 个文件）。要替换吗？</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>Writing the files…</source>
        <translation>正在写入文件…</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>Exported the dub: {0}, {1} cue files, {2}</source>
        <translation>已导出配音：{0}、{1} 个字幕音频文件、{2}</translation>
    </message>
    <message>
        <location filename="../dubbing.py"/>
        <source>The dub of {0} is not exported. Discard it?</source>
        <translation>{0} 的配音尚未导出。要丢弃吗？</translation>
    </message>
</context>
<context>
    <name>SubtitleView</name>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>A take longer than its cue is sped up by at most this much to fit.</source>
        <translation>比字幕时段长的录音最多加速这么多，以放进时段。</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>A take longer than its cue is drawn again with a new seed, up to this many takes.</source>
        <translation>比字幕时段长的录音会用新的种子重新生成，最多生成这么多次。</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>End</source>
        <translation>结束</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Voice</source>
        <translation>声音</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Spoken</source>
        <translation>朗读时长</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Fit</source>
        <translation>适配</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Dub</source>
        <translation>配音</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Speed up at most</source>
        <translation>最多加速</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Takes per cue</source>
        <translation>每条字幕最多生成</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} · {1} cues</source>
        <translation>{0} · {1} 条字幕</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Press Dub to speak every cue inside its time slot.</source>
        <translation>按“配音”，让每条字幕都在自己的时段内说完。</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Heard: {0}</source>
        <translation>听到：{0}</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>overruns by {0} at {1}×</source>
        <translation>以 {1}× 仍超出 {0}</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>fits at {0}×</source>
        <translation>以 {0}× 放入</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>nothing to say</source>
        <translation>无可朗读</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} s</source>
        <translation>{0} 秒</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} ms</source>
        <translation>{0} 毫秒</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} of {1} cues fit</source>
        <translation>{1} 条字幕中 {0} 条放得下</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>#{0} by {1}</source>
        <translation>#{0} 超出 {1}</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>; {0} overrun: {1}</source>
        <translation>；{0} 条超时：{1}</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} with nothing to say</source>
        <translation>{0} 条无可朗读</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} failed</source>
        <translation>{0} 条失败</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} stopped</source>
        <translation>{0} 条已停止</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} of {1} cues</source>
        <translation>{0} / {1} 条字幕</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} ({1})</source>
        <translation>{0}（{1}）</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>last cue&apos;s end</source>
        <translation>最后一条字幕结束处</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>The exported track&apos;s length: give the video&apos;s, or leave it at the last cue&apos;s end.</source>
        <translation>导出音轨的长度：填写视频的长度，或保持为最后一条字幕的结束时间。</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>Track length</source>
        <translation>音轨长度</translation>
    </message>
    <message>
        <location filename="../views/subtitle_view.py"/>
        <source>{0} · about {1} left</source>
        <translation>{0} · 约剩 {1}</translation>
    </message>
</context>
<context>
    <name>CheckpointTable</name>
    <message>
        <location filename="../train/checkpoint_table.py" line="47"/>
        <source>Step</source>
        <translation>步数</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="47"/>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="47"/>
        <source>Error rate</source>
        <translation>错误率</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="47"/>
        <source>Similarity</source>
        <translation>相似度</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="51"/>
        <source>Character error rate of the validation sentence as the recognizer hears it: lower is better</source>
        <translation>识别器听验证句时的字错误率：越低越好</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="55"/>
        <source>Speaker similarity to the held-out clips, 0 to 1: higher is better</source>
        <translation>与留出片段的说话人相似度，0 到 1：越高越好</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="74"/>
        <source>Play the validation sentence</source>
        <translation>播放验证句</translation>
    </message>
    <message>
        <location filename="../train/checkpoint_table.py" line="81"/>
        <source>best</source>
        <translation>最佳</translation>
    </message>
</context>
<context>
    <name>ClipTable</name>
    <message>
        <location filename="../train/clip_table.py" line="23"/>
        <source>too short</source>
        <translation>太短</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="24"/>
        <source>too long</source>
        <translation>太长</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="25"/>
        <source>clipped</source>
        <translation>削波失真</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="26"/>
        <source>silent</source>
        <translation>无声</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="27"/>
        <source>unsure transcript</source>
        <translation>文字不确定</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="61"/>
        <source>Words spoken</source>
        <translation>所说的话</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="61"/>
        <source>Length</source>
        <translation>时长</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="61"/>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="61"/>
        <source>Exclude</source>
        <translation>排除</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="64"/>
        <source>Double-click the words to correct them; Ctrl+Space plays the selected clip.</source>
        <translation>双击文字可以修改；Ctrl+空格 播放选中的片段。</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="77"/>
        <source>Play this clip</source>
        <translation>播放此片段</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="86"/>
        <source>validation</source>
        <translation>验证用</translation>
    </message>
    <message>
        <location filename="../train/clip_table.py" line="89"/>
        <source>Held out: each checkpoint&apos;s speaker similarity is measured against this clip.</source>
        <translation>留出：每个检查点的说话人相似度都与此片段比较。</translation>
    </message>
</context>
<context>
    <name>DataPage</name>
    <message>
        <location filename="../train/data_page.py" line="94"/>
        <source>Recordings of the voice</source>
        <translation>这个声音的录音</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="97"/>
        <source>Add one long recording, or a folder of short ones, of this person reading aloud. VoxDesk cuts it at the pauses into clips of 3 to 15 seconds and writes down the words. Listen to a few clips, correct any wrong word, and exclude clips with noise or another voice. You can also drop files or a folder here.</source>
        <translation>添加这个人朗读的一段长录音，或一个装有短录音的文件夹。VoxDesk 会在停顿处把它切成 3 到 15 秒的片段，并写下所说的话。听几个片段，改正错字，并排除有噪音或有其他人声音的片段。也可以把文件或文件夹拖到这里。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="104"/>
        <source>Add a recording…</source>
        <translation>添加录音…</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="105"/>
        <source>Add a folder of clips…</source>
        <translation>添加片段文件夹…</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="106"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="140"/>
        <source>A folder of recordings</source>
        <translation>录音文件夹</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="161"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="165"/>
        <source>Cutting the recordings into clips… {0:.0f}%</source>
        <translation>正在把录音切成片段… {0:.0f}%</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="167"/>
        <source>Writing down the words of each clip… {0:.0f}%</source>
        <translation>正在写下每个片段所说的话… {0:.0f}%</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="170"/>
        <source>{0} · about {1} left</source>
        <translation>{0} · 约剩 {1}</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="184"/>
        <source>Cancelled; the clips made so far are kept.</source>
        <translation>已取消；已切好的片段都保留。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="226"/>
        <source>No clips yet. At least {0} minutes of speech are needed; 10 minutes or more is best.</source>
        <translation>还没有片段。至少需要 {0} 分钟的语音；10 分钟以上最好。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="230"/>
        <source>Usable speech: {0} of the {1}:00 minimum. Add more recordings to go on.</source>
        <translation>可用语音：{0}，最少需要 {1}:00。请添加更多录音后继续。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="233"/>
        <source>Usable speech: {0}. Enough to train; {1} minutes or more give a closer likeness.</source>
        <translation>可用语音：{0}。足够训练；{1} 分钟以上会更像。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="236"/>
        <source>Usable speech: {0}. Plenty.</source>
        <translation>可用语音：{0}。很充足。</translation>
    </message>
    <message>
        <location filename="../train/data_page.py" line="241"/>
        <source>Speech recognition is not installed, so the clips have no words yet: type what each clip says, or install a recognizer (Models… → Speech recognition) and add the recordings again.</source>
        <translation>没有安装语音识别，所以片段还没有文字：请输入每个片段所说的话，或者安装识别器（模型… → 语音识别）后再次添加录音。</translation>
    </message>
</context>
<context>
    <name>DevicePage</name>
    <message>
        <location filename="../train/device_page.py" line="49"/>
        <source>Train the voice “{0}”</source>
        <translation>训练声音“{0}”</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="52"/>
        <source>Cloning from a short recording copies the sound of a voice. Training on ten minutes or more of the same person also learns their accent, rhythm and habits. The result is a new voice in the library; the model and the voice you started from stay as they are.</source>
        <translation>用一段短录音克隆，复制的是声音的音色。用同一个人十分钟以上的录音训练，还能学到口音、节奏和说话习惯。结果是声音库里的一个新声音；模型和原来的声音保持不变。</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="59"/>
        <source>1. Add recordings of the voice and check the words.
2. Look at the plan sized to this computer.
3. Train, listen to each checkpoint, and keep the best one as a voice.</source>
        <translation>1. 添加这个声音的录音，并检查文字。
2. 查看按这台电脑配置的训练计划。
3. 训练，试听每个检查点，把最好的保存为声音。</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="65"/>
        <source>Train on the processor anyway (very slow: hours to days for the default run)</source>
        <translation>仍然用处理器训练（非常慢：默认训练需要几小时到几天）</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="88"/>
        <source>Looking for an NVIDIA GPU…</source>
        <translation>正在查找 NVIDIA GPU…</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="93"/>
        <source>Training runs on: {0}</source>
        <translation>训练设备：{0}</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="98"/>
        <source>Training needs an NVIDIA GPU, and none was found on this computer.</source>
        <translation>训练需要 NVIDIA GPU，而这台电脑上没有找到。</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="104"/>
        <source>It can train on the processor instead if you choose that below, but very slowly: the default run takes hours to days there, and the computer is busy all that time.</source>
        <translation>如果在下面选择，也可以改用处理器训练，但非常慢：默认训练需要几小时到几天，期间电脑一直很忙。</translation>
    </message>
    <message>
        <location filename="../train/device_page.py" line="125"/>
        <source>the processor (very slow)</source>
        <translation>处理器（非常慢）</translation>
    </message>
</context>
<context>
    <name>PlanPage</name>
    <message>
        <location filename="../train/plan_page.py" line="32"/>
        <source>estimated</source>
        <translation>估算</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="33"/>
        <source>measured on an H200</source>
        <translation>在 H200 上实测</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="80"/>
        <source>The plan</source>
        <translation>训练计划</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="83"/>
        <source>VoxDesk trains a small add-on to the model (a LoRA: rank 32, alpha 32, on the language model and the diffusion decoder, learning rate 0.0001, as the official recipe does), sized to fit this computer&apos;s memory.</source>
        <translation>VoxDesk 为模型训练一个小附加模块（LoRA：秩 32，alpha 32，作用于语言模型和扩散解码器，学习率 0.0001，与官方配方相同），并按这台电脑的内存调整规模。</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="89"/>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="90"/>
        <source>Runs on:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="91"/>
        <source>Batch:</source>
        <translation>批次：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="92"/>
        <source>Memory saving:</source>
        <translation>节省内存：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="93"/>
        <source>Memory needed:</source>
        <translation>所需内存：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="94"/>
        <source>Steps:</source>
        <translation>步数：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="95"/>
        <source>Validation sentence:</source>
        <translation>验证句：</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="100"/>
        <source>More steps learn more, and past a point learn the recordings too well (overfitting).</source>
        <translation>步数越多学得越多，超过一定程度会把录音本身学得过头（过拟合）。</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="102"/>
        <source>Each checkpoint speaks this, so you can compare them by ear.</source>
        <translation>每个检查点都会说这句话，方便你用耳朵比较。</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="104"/>
        <source>This is my own voice, and it speaks whatever I write for it.</source>
        <translation>这是我自己的声音，我写什么它就说什么。</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="106"/>
        <source>Start training</source>
        <translation>开始训练</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="111"/>
        <source>After every step</source>
        <translation>每一步之后</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="111"/>
        <source>Every {0} steps</source>
        <translation>每 {0} 步</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="114"/>
        <source>{0} VoxDesk saves a checkpoint, speaks the sentence and scores it: the error rate of the words as the recognizer hears them, and how alike the voice is to the held-out clips.</source>
        <translation>{0}，VoxDesk 保存一个检查点，说出验证句并打分：识别器听到的文字错误率，以及声音与留出片段的相似程度。</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="153"/>
        <source>Sizing the run to this computer…</source>
        <translation>正在按这台电脑配置训练规模…</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="161"/>
        <source>batch size {0} × gradient accumulation {1} = {2} clips an update</source>
        <translation>批大小 {0} × 梯度累积 {1} = 每次更新 {2} 个片段</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="166"/>
        <source>on (recomputes activations: slower, fits a smaller card)</source>
        <translation>开（重新计算激活：较慢，可用于显存较小的显卡）</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="168"/>
        <source>off (not needed)</source>
        <translation>关（不需要）</translation>
    </message>
    <message>
        <location filename="../train/plan_page.py" line="171"/>
        <source>about {0:.1f} GB ({1})</source>
        <translation>约 {0:.1f} GB（{1}）</translation>
    </message>
</context>
<context>
    <name>TrainEntry</name>
    <message>
        <location filename="../train/entry.py" line="29"/>
        <source>Choose the voice to train in the list of voices first.</source>
        <translation>请先在声音列表中选择要训练的声音。</translation>
    </message>
    <message>
        <location filename="../train/entry.py" line="43"/>
        <source>Training adapts a model on this computer: choose a downloaded model in Tools → Models… first.</source>
        <translation>训练是在这台电脑上调整模型：请先在 工具 → 模型… 中选择一个已下载的模型。</translation>
    </message>
    <message>
        <location filename="../train/entry.py" line="51"/>
        <source>A training run of “{0}” is unfinished (step {1} of {2}). Resume it? (No starts a new run; the unfinished one is kept.)</source>
        <translation>“{0}”有一次未完成的训练（第 {1} 步，共 {2} 步）。要继续吗？（选“否”会开始新的训练；未完成的那次会保留。）</translation>
    </message>
    <message>
        <location filename="../train/entry.py" line="58"/>
        <source>The last training of “{0}” ended at step {1} of {2}, and no voice was kept from it. Open it to listen to its checkpoints and keep one? (No starts a new run; it stays saved.)</source>
        <translation>“{0}”上一次训练停在第 {1} 步（共 {2} 步），还没有从中保存声音。要打开它试听检查点并保存一个吗？（选“否”会开始新的训练；它仍会保留。）</translation>
    </message>
    <message>
        <location filename="../train/entry.py" line="74"/>
        <source>Training of the voice “{0}” stopped at step {1} of {2}. Resume it now? (It stays saved either way: Train this voice… offers it again.)</source>
        <translation>声音“{0}”的训练停在第 {1} 步（共 {2} 步）。现在继续吗？（无论如何都会保留：“训练这个声音…”会再次提供。）</translation>
    </message>
</context>
<context>
    <name>TrainPage</name>
    <message>
        <location filename="../train/train_page.py" line="69"/>
        <source>{0} (trained)</source>
        <translation>{0}（训练版）</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="108"/>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="109"/>
        <source>The loss curve appears with the first steps.</source>
        <translation>开始训练后这里会显示损失曲线。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="110"/>
        <source>Checkpoints (listen, then keep the one that sounds best):</source>
        <translation>检查点（试听后保留听起来最好的一个）：</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="111"/>
        <source>Stop training</source>
        <translation>停止训练</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="112"/>
        <source>End the run now; the checkpoints saved so far stay usable</source>
        <translation>现在结束训练；已保存的检查点仍可使用</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="113"/>
        <source>New voice:</source>
        <translation>新声音：</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="114"/>
        <source>Use this checkpoint</source>
        <translation>使用此检查点</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="137"/>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="150"/>
        <location filename="../train/train_page.py" line="191"/>
        <source>Step {0} of {1}</source>
        <translation>第 {0} 步，共 {1} 步</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="152"/>
        <source>{0} · loss {1:.3f}</source>
        <translation>{0} · 损失 {1:.3f}</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="154"/>
        <source>{0} · about {1} left</source>
        <translation>{0} · 约剩 {1}</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="162"/>
        <source>Pausing: saving a checkpoint first…</source>
        <translation>正在暂停：先保存检查点…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="164"/>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="166"/>
        <source>Loading the model…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="168"/>
        <source>Training… (resumed at step {0})</source>
        <translation>正在训练…（从第 {0} 步继续）</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="170"/>
        <source>Training…</source>
        <translation>正在训练…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="172"/>
        <source>Speaking and scoring the validation sentence…</source>
        <translation>正在说出验证句并打分…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="173"/>
        <source>Saving a checkpoint…</source>
        <translation>正在保存检查点…</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="175"/>
        <location filename="../train/train_page.py" line="180"/>
        <location filename="../train/train_page.py" line="225"/>
        <source>Training stopped. The checkpoints saved so far can still become a voice.</source>
        <translation>训练已停止。已保存的检查点仍可以保存为声音。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="177"/>
        <source>Paused. Resume now, or close: the run is kept and offered again next time.</source>
        <translation>已暂停。可以现在继续，或者关闭：训练会保留，下次会再提供。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="179"/>
        <location filename="../train/train_page.py" line="223"/>
        <source>Training finished. Listen to the checkpoints and keep the best as a voice.</source>
        <translation>训练完成。试听各个检查点，把最好的保存为声音。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="181"/>
        <location filename="../train/train_page.py" line="216"/>
        <source>Training failed: {0}</source>
        <translation>训练失败：{0}</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="206"/>
        <source>The validation got worse after step {0} while the loss kept falling: the voice may be learning the recordings rather than the speaker (overfitting). Step {0} is the best so far.</source>
        <translation>第 {0} 步之后验证结果变差，而损失仍在下降：模型可能在学录音本身而不是说话人（过拟合）。目前第 {0} 步最好。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="247"/>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="247"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="249"/>
        <source>Continue from the last checkpoint</source>
        <translation>从最近的检查点继续</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="251"/>
        <source>Save a checkpoint and stop; resume now or at a later start</source>
        <translation>保存检查点并停下；可以现在或下次启动时继续</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="258"/>
        <source>Pause or stop the training first</source>
        <translation>请先暂停或停止训练</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="272"/>
        <source>Stop training? The checkpoints saved so far stay, and any of them can become a voice.</source>
        <translation>停止训练吗？已保存的检查点会保留，其中任何一个都可以保存为声音。</translation>
    </message>
    <message>
        <location filename="../train/train_page.py" line="307"/>
        <source>“{0}” is in the voice library now (step {1}). Choose it for any segment to hear it.</source>
        <translation>“{0}”已加入声音库（第 {1} 步）。为任意片段选择它即可试听。</translation>
    </message>
</context>
<context>
    <name>TrainWizard</name>
    <message>
        <location filename="../train/wizard.py" line="77"/>
        <source>Train the voice “{0}”</source>
        <translation>训练声音“{0}”</translation>
    </message>
    <message>
        <location filename="../train/wizard.py" line="78"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../train/wizard.py" line="202"/>
        <source>The voice is training (step {0} of {1}). Pause it and keep the run to resume later, stop it (its checkpoints stay usable), or keep training?</source>
        <translation>声音正在训练（第 {0} 步，共 {1} 步）。要暂停并保留以便以后继续、停止训练（检查点仍可使用），还是继续训练？</translation>
    </message>
    <message>
        <location filename="../train/wizard.py" line="205"/>
        <source>Pause and keep</source>
        <translation>暂停并保留</translation>
    </message>
    <message>
        <location filename="../train/wizard.py" line="205"/>
        <source>Stop training</source>
        <translation>停止训练</translation>
    </message>
    <message>
        <location filename="../train/wizard.py" line="205"/>
        <source>Keep training</source>
        <translation>继续训练</translation>
    </message>
</context>
</TS>
