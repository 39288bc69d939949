<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>PassStats</name>
    <message>
        <source>fusion groups</source>
        <translation>融合组</translation>
    </message>
    <message>
        <source>pointwise groups</source>
        <translation>逐元素组</translation>
    </message>
    <message>
        <source>groups without a reduction</source>
        <translation>不含归约的组</translation>
    </message>
    <message>
        <source>reduction groups</source>
        <translation>归约组</translation>
    </message>
    <message>
        <source>groups around a reduction</source>
        <translation>围绕归约的组</translation>
    </message>
    <message>
        <source>normalization groups</source>
        <translation>归一化组</translation>
    </message>
    <message>
        <source>groups around a normalization (softmax, layer_norm)</source>
        <translation>围绕归一化的组（softmax、layer_norm）</translation>
    </message>
    <message>
        <source>fused nodes</source>
        <translation>融合的节点</translation>
    </message>
    <message>
        <source>nodes in a group</source>
        <translation>组内节点</translation>
    </message>
    <message>
        <source>kernels before fusion</source>
        <translation>融合前的内核数</translation>
    </message>
    <message>
        <source>calls other than views, getitems and host ops</source>
        <translation>除视图、getitem 和主机算子之外的调用</translation>
    </message>
    <message>
        <source>kernels after fusion</source>
        <translation>融合后的内核数</translation>
    </message>
    <message>
        <source>kernels left once each group is one</source>
        <translation>每组合并为一个后剩余的内核</translation>
    </message>
    <message>
        <source>traffic removed</source>
        <translation>消除的访存量</translation>
    </message>
    <message>
        <source>memory traffic fusion removes (in-group reads and writes)</source>
        <translation>融合消除的内存访问量（组内读写）</translation>
    </message>
    <message>
        <source>step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>the simulated step, copies included</source>
        <translation>模拟的步，含拷贝</translation>
    </message>
    <message>
        <source>forward and backward, estimated</source>
        <translation>前向和反向，估计值</translation>
    </message>
    <message>
        <source>compute time</source>
        <translation>计算时间</translation>
    </message>
    <message>
        <source>the step&apos;s compute alone</source>
        <translation>仅该步的计算</translation>
    </message>
    <message>
        <source>stalls</source>
        <translation>停顿</translation>
    </message>
    <message>
        <source>compute stalled waiting for copies</source>
        <translation>计算等待拷贝而停顿</translation>
    </message>
    <message>
        <source>floor</source>
        <translation>下限</translation>
    </message>
    <message>
        <source>max(compute, streamed bytes over the host link)</source>
        <translation>max(计算, 流式字节数 / 主机链路带宽)</translation>
    </message>
    <message>
        <source>peak weights</source>
        <translation>权重峰值</translation>
    </message>
    <message>
        <source>the most weight bytes on the GPU</source>
        <translation>GPU 上权重字节数的最大值</translation>
    </message>
    <message>
        <source>weight budget</source>
        <translation>权重预算</translation>
    </message>
    <message>
        <source>the weight budget planned for</source>
        <translation>规划所用的权重预算</translation>
    </message>
    <message>
        <source>peak budget</source>
        <translation>峰值预算</translation>
    </message>
    <message>
        <source>the peak budget asked for (policy=budget)</source>
        <translation>请求的峰值预算（policy=budget）</translation>
    </message>
    <message>
        <source>streamed per step</source>
        <translation>每步流式传输</translation>
    </message>
    <message>
        <source>weight bytes copied in per step</source>
        <translation>每步拷入的权重字节数</translation>
    </message>
    <message>
        <source>resident units</source>
        <translation>常驻单元</translation>
    </message>
    <message>
        <source>layer units kept on the GPU</source>
        <translation>保留在 GPU 上的层单元</translation>
    </message>
    <message>
        <source>saved values</source>
        <translation>保存的值</translation>
    </message>
    <message>
        <source>tensors the forward saves</source>
        <translation>前向保存的张量</translation>
    </message>
    <message>
        <source>saved for the backward</source>
        <translation>为反向保存</translation>
    </message>
    <message>
        <source>saved for the backward, weights left out</source>
        <translation>为反向保存的字节数，不含权重</translation>
    </message>
    <message>
        <source>recomputed nodes</source>
        <translation>重计算的节点</translation>
    </message>
    <message>
        <source>forward nodes the backward runs again</source>
        <translation>反向再次运行的前向节点</translation>
    </message>
    <message>
        <source>recompute time</source>
        <translation>重计算时间</translation>
    </message>
    <message>
        <source>the backward&apos;s recomputation</source>
        <translation>反向中的重计算</translation>
    </message>
    <message>
        <source>peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>the step&apos;s estimated peak memory</source>
        <translation>该步估计的峰值内存</translation>
    </message>
    <message>
        <source>budget met</source>
        <translation>满足预算</translation>
    </message>
    <message>
        <source>whether a plan within the budget was found</source>
        <translation>是否找到预算内的计划</translation>
    </message>
    <message>
        <source>offloaded values</source>
        <translation>卸载的值</translation>
    </message>
    <message>
        <source>saved values held in host memory</source>
        <translation>保存在主机内存中的值</translation>
    </message>
    <message>
        <source>offloaded bytes</source>
        <translation>卸载的字节数</translation>
    </message>
    <message>
        <source>bytes of the saved values held in host memory</source>
        <translation>保存在主机内存中的值的字节数</translation>
    </message>
    <message>
        <source>pieces</source>
        <translation>分段</translation>
    </message>
    <message>
        <source>pieces the split ops cut the graph into</source>
        <translation>切分算子将图切成的分段</translation>
    </message>
    <message>
        <source>split ops</source>
        <translation>切分算子</translation>
    </message>
    <message>
        <source>ops the graph is split at</source>
        <translation>图在其处切分的算子</translation>
    </message>
    <message>
        <source>layer units</source>
        <translation>层单元</translation>
    </message>
    <message>
        <source>smallest unit&apos;s weights</source>
        <translation>最小单元的权重</translation>
    </message>
    <message>
        <source>weights of the smallest unit</source>
        <translation>最小单元的权重字节数</translation>
    </message>
    <message>
        <source>largest unit&apos;s weights</source>
        <translation>最大单元的权重</translation>
    </message>
    <message>
        <source>weights of the largest unit</source>
        <translation>最大单元的权重字节数</translation>
    </message>
    <message>
        <source>executions</source>
        <translation>执行次数</translation>
    </message>
    <message>
        <source>nodes run in the step, recomputed ones again</source>
        <translation>该步运行的节点，重计算的再计一次</translation>
    </message>
    <message>
        <source>kernel launches</source>
        <translation>内核启动次数</translation>
    </message>
    <message>
        <source>kernels the step launches</source>
        <translation>该步启动的内核数</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>fusion groups (each one generated kernel)</source>
        <translation>融合组（每组生成一个内核）</translation>
    </message>
</context>
<context>
    <name>lathe::passes</name>
    <message>
        <source>pointwise</source>
        <translation>逐元素</translation>
    </message>
    <message>
        <source>reduction</source>
        <translation>归约</translation>
    </message>
    <message>
        <source>normalization</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>+ group %1 (%2): %3</source>
        <translation>+ 融合组 %1（%2）：%3</translation>
    </message>
    <message>
        <source>offload(%1): %2 of %3 units resident, step %4 (floor %5, bubbles %6), peak weights %7 of %8</source>
        <translation>offload(%1)：%3 个单元中 %2 个常驻，单步 %4（下限 %5，气泡 %6），权重峰值 %7 / %8</translation>
    </message>
    <message>
        <source>= resident %1 (%2)</source>
        <translation>= 常驻 %1（%2）</translation>
    </message>
    <message>
        <source>+ stream %1: copy %2 .. %3 in the previous step&apos;s tail, when %4 is reached, for %5</source>
        <translation>+ 流式 %1：在上一单步尾部拷贝 %2 .. %3，到达 %4 时开始，供 %5 使用</translation>
    </message>
    <message>
        <source>+ stream %1: copy %2 .. %3, when %4 is reached, for %5</source>
        <translation>+ 流式 %1：拷贝 %2 .. %3，到达 %4 时开始，供 %5 使用</translation>
    </message>
    <message>
        <source>needed by the backward</source>
        <translation>反向需要</translation>
    </message>
    <message>
        <source>min cut</source>
        <translation>最小割</translation>
    </message>
    <message>
        <source>primal read by the backward</source>
        <translation>反向读取的原始输入</translation>
    </message>
    <message>
        <source>compute sensitive: %1</source>
        <translation>计算敏感：%1</translation>
    </message>
    <message>
        <source>needed by the backward, not recomputable</source>
        <translation>反向需要，无法重计算</translation>
    </message>
    <message>
        <source>a weight: held for the whole step anyway</source>
        <translation>权重：整步都会保留</translation>
    </message>
    <message>
        <source>an input of the step: nothing to recompute</source>
        <translation>单步的输入：无可重计算</translation>
    </message>
    <message>
        <source>must run once (%1 op)</source>
        <translation>只能运行一次（%1 算子）</translation>
    </message>
    <message>
        <source>kept: recomputing it alone would take %1 to free %2</source>
        <translation>保留：单独重计算需 %1，只释放 %2</translation>
    </message>
    <message>
        <source>recompute(%1): save %2 (%3), recompute %4, step peak %5</source>
        <translation>recompute(%1)：保存 %2（%3），重计算 %4，单步峰值 %5</translation>
    </message>
    <message numerus="yes">
        <source>%n value(s)</source>
        <translation>
            <numerusform>%n 个值</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n 个节点</numerusform>
        </translation>
    </message>
    <message>
        <source>! budget %1 is below the smallest peak found, %2; the plan with that peak is kept</source>
        <translation>! 预算 %1 低于找到的最小峰值 %2；保留该峰值的方案</translation>
    </message>
    <message>
        <source>+ saved %1  (%2)</source>
        <translation>+ 保存 %1（%2）</translation>
    </message>
    <message>
        <source>+ recomputed %1</source>
        <translation>+ 重计算 %1</translation>
    </message>
    <message>
        <source>recompute(%1): offload %2 (%3) to host memory, copies hidden behind %4 of forward and %5 of backward</source>
        <translation>recompute(%1)：将 %2（%3）卸载到主机内存，拷贝隐藏在 %4 前向和 %5 反向之后</translation>
    </message>
    <message numerus="yes">
        <source>%n saved value(s)</source>
        <translation>
            <numerusform>%n 个保存值</numerusform>
        </translation>
    </message>
    <message>
        <source>the backward&apos;s start</source>
        <translation>反向开始处</translation>
    </message>
    <message>
        <source>+ offloaded %1  (%2; on host from %3 to %4)</source>
        <translation>+ 卸载 %1（%2；从 %3 到 %4 位于主机）</translation>
    </message>
    <message>
        <source>recompute(budget): no memory given: the least peak at no more step time than torch&apos;s saved set (%1, peak %2)</source>
        <translation>recompute(budget)：未给定内存：单步时间不超过 torch 保存集（%1，峰值 %2）时的最小峰值</translation>
    </message>
    <message>
        <source>listed in the file</source>
        <translation>文件中列出</translation>
    </message>
    <message>
        <source>+ piece %1: %2 (split op %3)</source>
        <translation>+ 片段 %1：%2（切分算子 %3）</translation>
    </message>
    <message>
        <source>+ piece %1: %2 (after split op %3)</source>
        <translation>+ 片段 %1：%2（在切分算子 %3 之后）</translation>
    </message>
    <message>
        <source>+ piece %1: %2</source>
        <translation>+ 片段 %1：%2</translation>
    </message>
    <message>
        <source>+ unit %1: %2, %3</source>
        <translation>+ 单元 %1：%2，%3</translation>
    </message>
    <message numerus="yes">
        <source>%n weight(s)</source>
        <translation>
            <numerusform>%n 个权重</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::studio::Language</name>
    <message>
        <source>System language</source>
        <translation>跟随系统</translation>
    </message>
</context>
<context>
    <name>lathe::studio::MainWindow</name>
    <message>
        <source>Lathe Studio</source>
        <translation>Lathe Studio</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>No graph selected</source>
        <translation>未选择图</translation>
    </message>
    <message>
        <source>Filter nodes: name, target, category, shape, source…</source>
        <translation>筛选节点：名称、目标、类别、形状、源码…</translation>
    </message>
    <message>
        <source>Find Node</source>
        <translation>查找节点</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>图</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Artifact</source>
        <translation>产物</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>检查器</translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <source>Memory timeline</source>
        <translation>内存时间线</translation>
    </message>
    <message>
        <source>Diagnostics</source>
        <translation>诊断</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open File…</source>
        <translation>打开文件(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Folder…</source>
        <translation>打开文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Open &amp;Example</source>
        <translation>打开示例(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Lathe Studio</source>
        <translation>关于 Lathe Studio(&amp;A)</translation>
    </message>
    <message>
        <source>About Lathe Studio</source>
        <translation>关于 Lathe Studio</translation>
    </message>
    <message>
        <source>Lathe Studio %1: a workbench for PyTorch compiler artifacts (TORCH_TRACE logs, torch.export archives, CUDA memory snapshots).</source>
        <translation>Lathe Studio %1：PyTorch 编译产物工作台（TORCH_TRACE 日志、torch.export 归档、CUDA 内存快照）。</translation>
    </message>
    <message>
        <source>No file to open (the bundled example is missing).</source>
        <translation>没有可打开的文件（缺少内置示例）。</translation>
    </message>
    <message>
        <source>Open artifact</source>
        <translation>打开产物</translation>
    </message>
    <message>
        <source>Open a folder of TORCH_TRACE rank logs</source>
        <translation>打开包含各 rank TORCH_TRACE 日志的文件夹</translation>
    </message>
    <message>
        <source>Loading %1 cancelled</source>
        <translation>已取消加载 %1</translation>
    </message>
    <message>
        <source>Could not open %1: %2</source>
        <translation>无法打开 %1：%2</translation>
    </message>
    <message>
        <source>Could not open %1; the Diagnostics pane says why.</source>
        <translation>无法打开 %1；原因见“诊断”面板。</translation>
    </message>
    <message>
        <source>%1 — Lathe Studio</source>
        <translation>%1 — Lathe Studio</translation>
    </message>
    <message numerus="yes">
        <source>Loaded %1: %n graph(s)</source>
        <translation>
            <numerusform>已加载 %1：%n 个图</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n diagnostic(s)</source>
        <translation>
            <numerusform>，%n 条诊断</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 · %2 nodes · %3 calls · %4 inputs</source>
        <translation>%1 · %2 个节点 · %3 个调用 · %4 个输入</translation>
    </message>
    <message>
        <source>Gantt</source>
        <translation>甘特图</translation>
    </message>
    <message>
        <source>Saved tensors</source>
        <translation>保存的张量</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>帕累托</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>&amp;Export View…</source>
        <translation>导出视图(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>No graph is drawn yet: select one in the artifact tree.</source>
        <translation>尚未绘制图：请在产物树中选择一个。</translation>
    </message>
    <message>
        <source>Export the graph view</source>
        <translation>导出图视图</translation>
    </message>
    <message>
        <source>SVG image (*.svg);;PNG image (*.png)</source>
        <translation>SVG 图像 (*.svg);;PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>Exported the graph view to %1</source>
        <translation>已将图视图导出到 %1</translation>
    </message>
    <message>
        <source>Guards</source>
        <translation>守卫</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 · FX graph</source>
        <translation>%1 · FX 图</translation>
    </message>
    <message>
        <source>Load Memory &amp;Snapshot onto the Timeline…</source>
        <translation>将内存快照加载到时间线(&amp;S)…</translation>
    </message>
    <message>
        <source>Cancel Export</source>
        <translation>取消导出</translation>
    </message>
    <message>
        <source>PyTorch artifacts and Lathe plans (*.log *.log.gz *.gz *.pt2 *.pickle *.txt *.json);;Lathe plans (*.plan.json *.json);;All files (*)</source>
        <translation>PyTorch 产物和 Lathe 规划 (*.log *.log.gz *.gz *.pt2 *.pickle *.txt *.json);;Lathe 规划 (*.plan.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>%1 · %2 — Lathe Studio</source>
        <translation>%1 · %2 — Lathe Studio</translation>
    </message>
    <message>
        <source>&amp;Save Plan…</source>
        <translation>保存规划(&amp;S)…</translation>
    </message>
    <message>
        <source>Write the plan on show (the last step of its pipeline) as a lathe.plan/1 bundle</source>
        <translation>将当前显示的规划（其流水线的最后一步）写为 lathe.plan/1 规划包</translation>
    </message>
    <message>
        <source>Export &amp;Kernels…</source>
        <translation>导出内核(&amp;K)…</translation>
    </message>
    <message>
        <source>Generate and compile CUDA kernels for the plan&apos;s fusion groups into a folder, as lathe export does</source>
        <translation>为规划中的融合组生成并编译 CUDA 内核，写入一个文件夹，与 lathe export 相同</translation>
    </message>
    <message>
        <source>Exporting kernels to %1…</source>
        <translation>正在将内核导出到 %1…</translation>
    </message>
    <message>
        <source>Cancelling the export (a compiler run finishes first; its output is thrown away)…</source>
        <translation>正在取消导出（正在运行的编译会先结束，其输出将被丢弃）…</translation>
    </message>
    <message>
        <source>Could not open the plan %1: %2</source>
        <translation>无法打开规划 %1：%2</translation>
    </message>
    <message>
        <source>Open Plan</source>
        <translation>打开规划</translation>
    </message>
    <message>
        <source>Could not open the plan %1. Nothing was changed.</source>
        <translation>无法打开规划 %1。未做任何更改。</translation>
    </message>
    <message>
        <source>Could not plan on the plan&apos;s hardware: %1</source>
        <translation>无法在该规划的硬件上进行规划：%1</translation>
    </message>
    <message>
        <source>The plan&apos;s pipeline failed: %1</source>
        <translation>该规划的流水线失败：%1</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline failed here.</source>
        <translation>规划 %1：其流水线在此处运行失败。</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline re-run here on %2 makes the decisions it records.</source>
        <translation>规划 %1：其流水线在 %2 上重新运行，得到的决策与规划包中记录的一致。</translation>
    </message>
    <message>
        <source>Opened the plan %1: graph %2, %3</source>
        <translation>已打开规划 %1：图 %2，%3</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline re-run here decides otherwise (%2). The views show the re-run, not the bundle.</source>
        <translation>规划 %1：其流水线在此处重新运行后得到不同的决策（%2）。各视图显示的是重新运行的结果，而非规划包中的内容。</translation>
    </message>
    <message>
        <source>The plan %1 was not reproduced: %2 differ</source>
        <translation>规划 %1 未能复现：%2 不同</translation>
    </message>
    <message>
        <source>Save Plan</source>
        <translation>保存规划</translation>
    </message>
    <message>
        <source>Lathe plans (*.plan.json);;All files (*)</source>
        <translation>Lathe 规划 (*.plan.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Saving the plan to %1…</source>
        <translation>正在将规划保存到 %1…</translation>
    </message>
    <message>
        <source>Could not save the plan to %1</source>
        <translation>无法将规划保存到 %1</translation>
    </message>
    <message>
        <source>Could not save the plan to %1; no file was changed.</source>
        <translation>无法将规划保存到 %1；没有任何文件被更改。</translation>
    </message>
    <message>
        <source>Saved the plan of %1 to %2</source>
        <translation>已将 %1 的规划保存到 %2</translation>
    </message>
    <message>
        <source>Export Kernels: a new or empty folder, or an earlier export to replace</source>
        <translation>导出内核：选择一个新的或空的文件夹，或要替换的先前导出</translation>
    </message>
    <message>
        <source>Kernel export cancelled; %1 is as it was</source>
        <translation>已取消内核导出；%1 保持原样</translation>
    </message>
    <message>
        <source>Kernel export failed; %1 is as it was</source>
        <translation>内核导出失败；%1 保持原样</translation>
    </message>
    <message>
        <source>Export Kernels</source>
        <translation>导出内核</translation>
    </message>
    <message>
        <source>No kernels were exported; %1 is as it was.</source>
        <translation>未导出任何内核；%1 保持原样。</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n fusion group(s) generated</source>
        <translation>
            <numerusform>已为 %n 个融合组中的 %1 个生成内核</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n group(s) not generated: %1</source>
        <translation>
            <numerusform>%n 个组未生成：%1</numerusform>
        </translation>
    </message>
    <message>
        <source>Compiled with %1 for %2.</source>
        <translation>使用 %1 为 %2 编译。</translation>
    </message>
    <message>
        <source>%1; the kernel bundle is in %2</source>
        <translation>%1；内核包位于 %2</translation>
    </message>
    <message>
        <source>%1. The kernel bundle (manifest.json, liblathe_kernels.so, kernels.fatbin, sources) is in %2.</source>
        <translation>%1。内核包（manifest.json、liblathe_kernels.so、kernels.fatbin、源代码）位于 %2。</translation>
    </message>
    <message>
        <source>Save Plan… records the export in the plan bundle.</source>
        <translation>“保存规划…”会将此次导出记录到规划包中。</translation>
    </message>
    <message>
        <source>Offload run</source>
        <translation>权重卸载运行</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Load &amp;Profile…</source>
        <translation>加载性能剖析(&amp;P)…</translation>
    </message>
    <message>
        <source>Price the graph on show as a lathe.profile/1 file measured it (lathe measure CAPTURE -o profile.json)</source>
        <translation>按 lathe.profile/1 文件的实测结果为当前图定价（lathe measure CAPTURE -o profile.json）</translation>
    </message>
    <message>
        <source>&amp;Clear Profile</source>
        <translation>清除性能剖析(&amp;C)</translation>
    </message>
    <message>
        <source>Plan with the model&apos;s estimates again</source>
        <translation>重新使用模型估计进行规划</translation>
    </message>
    <message>
        <source>Reading the profile %1…</source>
        <translation>正在读取性能剖析 %1…</translation>
    </message>
    <message>
        <source>Load Profile</source>
        <translation>加载性能剖析</translation>
    </message>
    <message>
        <source>Lathe profiles (*.json);;All files (*)</source>
        <translation>Lathe 性能剖析 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>The profile was not applied: %1</source>
        <translation>未应用性能剖析：%1</translation>
    </message>
    <message>
        <source>The profile was not applied; the plan is priced as it was.</source>
        <translation>未应用性能剖析；规划的定价保持不变。</translation>
    </message>
    <message>
        <source>Back to the model&apos;s estimates</source>
        <translation>回到模型估计</translation>
    </message>
    <message>
        <source>CUDA memory snapshot · %1</source>
        <translation>CUDA 内存快照 · %1</translation>
    </message>
    <message>
        <source>Loaded %1: a CUDA memory snapshot</source>
        <translation>已加载 %1：CUDA 内存快照</translation>
    </message>
    <message>
        <source>Snapshot</source>
        <translation>快照</translation>
    </message>
    <message>
        <source>Compiles</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>Compile %1 logged no graph</source>
        <translation>编译 %1 未记录任何图</translation>
    </message>
    <message>
        <source>Lifecycle</source>
        <translation>生命周期</translation>
    </message>
    <message>
        <source>Export &amp;Report…</source>
        <translation>导出报告(&amp;R)…</translation>
    </message>
    <message>
        <source>Write one self-contained HTML file with the plan on show, its pictures, the compiles and the diagnostics, as lathe report does</source>
        <translation>写出一个自包含的 HTML 文件，包含当前计划及其图片、各次编译和诊断信息，与 lathe report 相同</translation>
    </message>
    <message>
        <source>Export Report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>HTML reports (*.html);;All files (*)</source>
        <translation>HTML 报告 (*.html);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Writing the report of %1 to %2…</source>
        <translation>正在将 %1 的报告写入 %2…</translation>
    </message>
    <message>
        <source>Writing the report to %1 (no plan on show: compiles and diagnostics only)…</source>
        <translation>正在将报告写入 %1（当前没有计划：仅包含编译和诊断信息）…</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Could not write the report to %1</source>
        <translation>无法将报告写入 %1</translation>
    </message>
    <message>
        <source>Could not write the report to %1; no file was changed.</source>
        <translation>无法将报告写入 %1；没有文件被更改。</translation>
    </message>
    <message>
        <source>Wrote the report to %1</source>
        <translation>已将报告写入 %1</translation>
    </message>
    <message>
        <source>&amp;Compare With…</source>
        <translation>比较(&amp;C)…</translation>
    </message>
    <message>
        <source>Compare the graph on show with a graph of another capture, or its plan with a plan bundle</source>
        <translation>将当前图与另一个捕获中的图比较，或将其计划与计划包比较</translation>
    </message>
    <message>
        <source>Compare With</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Captures and plans (*.log *.gz *.txt *.pt2 *.json);;All files (*)</source>
        <translation>捕获和计划 (*.log *.gz *.txt *.pt2 *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Diagnostics (%1)</source>
        <translation>诊断（%1）</translation>
    </message>
    <message>
        <source>captured on the CPU, priced as on %1</source>
        <translation>在 CPU 上捕获，按 %1 估价</translation>
    </message>
</context>
<context>
    <name>lathe::views</name>
    <message>
        <source>%1 in %2</source>
        <translation>%2 中的 %1</translation>
    </message>
</context>
<context>
    <name>lathe::views::ArtifactLoader</name>
    <message>
        <source>%1 is not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot); open captures and .pt2 archives with File › Open.</source>
        <translation>%1 不是 CUDA 内存快照（torch.cuda.memory._dump_snapshot）；捕获和 .pt2 归档请用“文件 › 打开”打开。</translation>
    </message>
</context>
<context>
    <name>lathe::views::ArtifactTreeModel</name>
    <message numerus="yes">
        <source>%n recompile reason(s)</source>
        <translation>
            <numerusform>%n 条重编译原因</numerusform>
        </translation>
    </message>
    <message>
        <source>%1:%2 in %3</source>
        <translation>%3 中的 %1:%2</translation>
    </message>
    <message>
        <source>rank %1 · %2</source>
        <translation>rank %1 · %2</translation>
    </message>
    <message>
        <source>Guards</source>
        <translation>守卫</translation>
    </message>
    <message>
        <source>Outside any compile</source>
        <translation>不属于任何编译</translation>
    </message>
    <message>
        <source>exported program</source>
        <translation>导出的程序</translation>
    </message>
    <message>
        <source>Memory snapshot</source>
        <translation>内存快照</translation>
    </message>
    <message numerus="yes">
        <source>%n segment(s)</source>
        <translation>
            <numerusform>%n 个段</numerusform>
        </translation>
    </message>
    <message>
        <source>Diagnostics</source>
        <translation>诊断</translation>
    </message>
    <message>
        <source>%1 errors, %2 warnings, %3 notes</source>
        <translation>%1 个错误，%2 个警告，%3 条提示</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Inductor output code</source>
        <translation>Inductor 输出代码</translation>
    </message>
    <message>
        <source>Inductor output code #%1</source>
        <translation>Inductor 输出代码 #%1</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s)</source>
        <translation>
            <numerusform>%n 行</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Dynamo: %n guard(s)</source>
        <translation>
            <numerusform>Dynamo：%n 个守卫</numerusform>
        </translation>
    </message>
    <message>
        <source>Decompiled bytecode</source>
        <translation>反编译的字节码</translation>
    </message>
    <message>
        <source>Inductor output code · %1</source>
        <translation>Inductor 输出代码 · %1</translation>
    </message>
</context>
<context>
    <name>lathe::views::BudgetPanel</name>
    <message>
        <source>NVIDIA H200</source>
        <translation>NVIDIA H200</translation>
    </message>
    <message>
        <source>NVIDIA H100 SXM</source>
        <translation>NVIDIA H100 SXM</translation>
    </message>
    <message>
        <source>NVIDIA RTX 5090</source>
        <translation>NVIDIA RTX 5090</translation>
    </message>
    <message>
        <source>NVIDIA A100 80GB</source>
        <translation>NVIDIA A100 80GB</translation>
    </message>
    <message>
        <source>NVIDIA L40S</source>
        <translation>NVIDIA L40S</translation>
    </message>
    <message>
        <source>Peak memory the step may use; below the slider&apos;s left end no saved set fits.</source>
        <translation>一步训练可使用的峰值内存；低于滑块最左端时没有任何保存集合能满足。</translation>
    </message>
    <message>
        <source>Memory budget: from the least peak recompute can reach to the peak without recompute.</source>
        <translation>内存预算：从重计算能达到的最低峰值，到不重计算时的峰值。</translation>
    </message>
    <message>
        <source>Share of the weights kept resident on the GPU; the others are streamed in just in time (offload policy heuristic).</source>
        <translation>常驻 GPU 的权重比例；其余权重按需及时传入（卸载策略 heuristic）。</translation>
    </message>
    <message>
        <source>Custom JSON…</source>
        <translation>自定义 JSON…</translation>
    </message>
    <message>
        <source>Memory budget</source>
        <translation>内存预算</translation>
    </message>
    <message>
        <source>Resident weights</source>
        <translation>常驻权重</translation>
    </message>
    <message>
        <source>Target GPU</source>
        <translation>目标 GPU</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>&lt;i&gt;Re-planning…&lt;/i&gt;</source>
        <translation>&lt;i&gt;正在重新规划…&lt;/i&gt;</translation>
    </message>
    <message>
        <source>Hardware profile</source>
        <translation>硬件配置</translation>
    </message>
    <message>
        <source>Lathe hardware profiles (*.json);;All files (*)</source>
        <translation>Lathe 硬件配置 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Select a graph to plan.</source>
        <translation>请选择要规划的图。</translation>
    </message>
    <message>
        <source>Computing the recompute frontier…</source>
        <translation>正在计算重计算前沿…</translation>
    </message>
    <message>
        <source>The recompute frontier failed: %1</source>
        <translation>重计算前沿计算失败：%1</translation>
    </message>
    <message>
        <source>&lt;b&gt;Planning failed:&lt;/b&gt; %1</source>
        <translation>&lt;b&gt;规划失败：&lt;/b&gt;%1</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step estimate &lt;b&gt;%2&lt;/b&gt; on %3</source>
        <translation>&lt;b&gt;峰值 %1&lt;/b&gt; · 在 %3 上的单步估计 &lt;b&gt;%2&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Recompute %1 (policy %2), %3 saved</source>
        <translation>重计算 %1（策略 %2），保存 %3</translation>
    </message>
    <message>
        <source>Offload: %1 streamed per step, stalls %2</source>
        <translation>卸载：每步传输 %1，停顿 %2</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;&lt;b&gt;Budget %1 cannot be met:&lt;/b&gt; no saved set brings the peak below %2; the plan shown is the one with the least peak.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;&lt;b&gt;无法满足预算 %1：&lt;/b&gt;没有任何保存集合能使峰值低于 %2；显示的是峰值最低的规划。&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#2e7d32&apos;&gt;Within the budget of %1.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#2e7d32&apos;&gt;在 %1 的预算之内。&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;The peak is more than the %1 of %2.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;峰值超过了 %2 的 %1。&lt;/span&gt;</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>No recompute: not a joint (training) graph.</source>
        <translation>无重计算：不是联合（训练）图。</translation>
    </message>
    <message>
        <source>Memory budgets choose what a training step recomputes; this graph is planned with offload only.</source>
        <translation>内存预算决定训练步骤中重计算哪些值；此图只规划卸载。</translation>
    </message>
    <message numerus="yes">
        <source>Reachable: %1 to %2, %n frontier point(s)</source>
        <translation>
            <numerusform>可达范围：%1 到 %2，共 %n 个前沿点</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 with the most recompute, %2 with none.</source>
        <translation>最多重计算时为 %1，不重计算时为 %2。</translation>
    </message>
    <message>
        <source>peak unchanged</source>
        <translation>峰值不变</translation>
    </message>
    <message>
        <source>peak +%1</source>
        <translation>峰值 +%1</translation>
    </message>
    <message>
        <source>peak −%1</source>
        <translation>峰值 −%1</translation>
    </message>
    <message>
        <source>&lt;i&gt;Since the last plan: %1, %2 value(s) newly saved, %3 now recomputed.&lt;/i&gt;</source>
        <translation>&lt;i&gt;与上次规划相比：%1，新保存 %2 个值，新重计算 %3 个。&lt;/i&gt;</translation>
    </message>
    <message>
        <source>Offload activations to host memory</source>
        <translation>将激活卸载到主机内存</translation>
    </message>
    <message>
        <source>Stream weights</source>
        <translation>流式传输权重</translation>
    </message>
    <message>
        <source>Saved values whose copies to pinned host memory and back hide behind compute leave the GPU between forward and backward (recompute offload=true); the budget then recomputes less.</source>
        <translation>复制到锁页主机内存并取回的过程可被计算掩盖的保存值，在前向与反向之间离开 GPU（recompute offload=true）；预算因此需要更少的重计算。</translation>
    </message>
    <message>
        <source>Keep only a share of the weights on the GPU and stream the others in just in time (offload policy heuristic). Costs step time where the copies do not hide.</source>
        <translation>只在 GPU 上常驻一部分权重，其余按需及时传入（offload policy heuristic）。传输无法被掩盖时会增加步时间。</translation>
    </message>
    <message numerus="yes">
        <source>Activations: %n value(s), %1 held in host memory</source>
        <translation>
            <numerusform>激活：%n 个值，%1 保存在主机内存中</numerusform>
        </translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;Cannot plan on %1: %2&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;无法在 %1 上规划：%2&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured · %3 estimated on %4</source>
        <translation>&lt;b&gt;峰值 %1&lt;/b&gt; · 在 %4 上单步实测 &lt;b&gt;%2&lt;/b&gt; · 估计 %3</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured on %3</source>
        <translation>&lt;b&gt;峰值 %1&lt;/b&gt; · 在 %3 上单步实测 &lt;b&gt;%2&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Measured: the plan&apos;s step with each node at the time %1 measured (the others at the model&apos;s estimate). Estimated: the same step as the model alone prices it.</source>
        <translation>实测：规划的单步中每个节点取 %1 实测的耗时（其余节点取模型估计）。估计：同一单步仅按模型定价。</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#a15c00&apos;&gt;Captured on the CPU: times and memory are estimated as if it ran on %1.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#a15c00&apos;&gt;在 CPU 上捕获：时间和内存按在 %1 上运行来估计。&lt;/span&gt;</translation>
    </message>
    <message>
        <source>This budget: peak %1, step %2 (recompute %3)</source>
        <translation>此预算：峰值 %1，单步 %2（重计算 %3）</translation>
    </message>
    <message>
        <source>; on show: peak %1, step %2</source>
        <translation>；当前显示：峰值 %1，单步 %2</translation>
    </message>
    <message>
        <source>, before offload</source>
        <translation>，未计卸载</translation>
    </message>
    <message>
        <source>Resident %1 %: weights on the GPU at most %2 of %3, step %4 (stalls %5)</source>
        <translation>常驻 %1 %：GPU 上的权重至多 %2 / %3，单步 %4（停顿 %5）</translation>
    </message>
    <message>
        <source>Resident %1 %: %2</source>
        <translation>常驻 %1 %：%2</translation>
    </message>
</context>
<context>
    <name>lathe::views::CalibrationModel</name>
    <message>
        <source>(estimated − measured) / measured: −50% means the model expected half the measured time</source>
        <translation>（估计 − 实测）/ 实测：−50% 表示模型估计的耗时是实测的一半</translation>
    </message>
    <message>
        <source>Op category</source>
        <translation>算子类别</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation>估计</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>误差</translation>
    </message>
</context>
<context>
    <name>lathe::views::CalibrationView</name>
    <message numerus="yes">
        <source>Priced with %1 (%n node(s) measured): the model was %2 off, %3 estimated against %4 measured.</source>
        <translation>
            <numerusform>按 %1 定价（实测 %n 个节点）：模型偏差 %2，估计 %3，实测 %4。</numerusform>
        </translation>
    </message>
    <message>
        <source>Measured on %1, planned for %2: the plan takes the measured device&apos;s time for every node it timed.</source>
        <translation>在 %1 上实测，为 %2 规划：凡是测过的节点，规划都采用实测设备上的耗时。</translation>
    </message>
    <message>
        <source>No profile applied. File › Load Profile… reads a lathe.profile/1 file (lathe measure CAPTURE -o profile.json) and prices the graph on show as it was measured.</source>
        <translation>未应用性能剖析。“文件 › 加载性能剖析…”读取 lathe.profile/1 文件（lathe measure CAPTURE -o profile.json），并按实测结果为当前图定价。</translation>
    </message>
</context>
<context>
    <name>lathe::views::CodeView</name>
    <message>
        <source>Find in code</source>
        <translation>在代码中查找</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>上一个</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一个</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Click a node name, or a line naming source nodes, to select that node in %1.</source>
        <translation>点击节点名，或列出源节点的行，即可在 %1 中选中该节点。</translation>
    </message>
    <message>
        <source>No code selected: pick a graph or an output code entry in the artifact tree.</source>
        <translation>未选择代码：请在产物树中选择一个图或输出代码条目。</translation>
    </message>
    <message>
        <source>Not found</source>
        <translation>未找到</translation>
    </message>
    <message numerus="yes">
        <source>%n match(es)</source>
        <translation>
            <numerusform>%n 处匹配</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::CompareView</name>
    <message>
        <source>Open B…</source>
        <translation>打开 B…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Compare with a graph of another capture, or with a plan bundle and its graph</source>
        <translation>与另一个捕获中的图比较，或与计划包及其图比较</translation>
    </message>
    <message>
        <source>A:</source>
        <translation>A：</translation>
    </message>
    <message>
        <source>B:</source>
        <translation>B：</translation>
    </message>
    <message>
        <source>Calls</source>
        <translation>调用数</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>计划</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>B − A</source>
        <translation>B − A</translation>
    </message>
    <message>
        <source>%1 · %2 (the graph on show)</source>
        <translation>%1 · %2（当前显示的图）</translation>
    </message>
    <message>
        <source>no graph on show</source>
        <translation>没有显示图</translation>
    </message>
    <message>
        <source>loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>this artifact</source>
        <translation>此工件</translation>
    </message>
    <message>
        <source>%1 was not opened (%2); the comparison on show is unchanged.</source>
        <translation>未能打开 %1（%2）；当前比较保持不变。</translation>
    </message>
    <message>
        <source>Select a graph: it is A, compared with B.</source>
        <translation>选择一个图：它是 A，与 B 比较。</translation>
    </message>
    <message>
        <source>No graph to compare with: open another capture or a plan bundle as B.</source>
        <translation>没有可比较的图：打开另一个捕获或计划包作为 B。</translation>
    </message>
    <message numerus="yes">
        <source>The same graph: all %n node(s) match (by name, inputs by position, by op and source line).</source>
        <translation>
            <numerusform>同一个图：全部 %n 个节点都匹配（按名称、输入按位置、按算子和源代码行）。</numerusform>
        </translation>
    </message>
    <message>
        <source>A has %1 nodes, B %2. Matched %3 by name, %4 inputs by position and %5 by op and source line; &lt;b&gt;%6 changed, %7 only in A, %8 only in B&lt;/b&gt;. Double-click a row to show its node in A.</source>
        <translation>A 有 %1 个节点，B 有 %2 个。按名称匹配 %3 个，按位置匹配 %4 个输入，按算子和源代码行匹配 %5 个；&lt;b&gt;%6 个已更改，%7 个仅在 A 中，%8 个仅在 B 中&lt;/b&gt;。双击一行以显示其在 A 中的节点。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Plans&lt;/b&gt; A: %1 on %2 · B: %3 on %4%5</source>
        <translation>&lt;b&gt;计划&lt;/b&gt; A：%1，于 %2 · B：%3，于 %4%5</translation>
    </message>
    <message>
        <source> (different graphs: decisions compared by node name)</source>
        <translation>（不同的图：按节点名称比较决策）</translation>
    </message>
    <message>
        <source>at the peak: %1</source>
        <translation>峰值时：%1</translation>
    </message>
    <message>
        <source>values saved for the backward</source>
        <translation>为反向保存的值</translation>
    </message>
    <message>
        <source>values recomputed</source>
        <translation>重计算的值</translation>
    </message>
    <message>
        <source>saved only by this plan</source>
        <translation>仅此计划保存</translation>
    </message>
    <message>
        <source>fusion groups</source>
        <translation>融合组</translation>
    </message>
    <message numerus="yes">
        <source>… %n more</source>
        <translation>
            <numerusform>… 另有 %n 个</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::CompileMetricsModel</name>
    <message>
        <source>Compile %1 of %2 (%3:%4)</source>
        <translation>编译 %1：%2（%3:%4）</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Joint-graph passes (in AOTAutograd)</source>
        <translation>联合图 pass（属于 AOTAutograd）</translation>
    </message>
    <message>
        <source>Pre-grad passes</source>
        <translation>pre-grad pass</translation>
    </message>
    <message>
        <source>Post-grad passes</source>
        <translation>post-grad pass</translation>
    </message>
    <message>
        <source>Triton compiles (in code generation)</source>
        <translation>Triton 编译（属于代码生成）</translation>
    </message>
    <message>
        <source>Tracing thrown away by a restart</source>
        <translation>因重启而丢弃的追踪</translation>
    </message>
    <message>
        <source>Remote caches: FX graph %1 hit(s), %2 miss(es); AOTAutograd %3 hit(s), %4 miss(es)</source>
        <translation>远程缓存：FX 图命中 %1 次、未命中 %2 次；AOTAutograd 命中 %3 次、未命中 %4 次</translation>
    </message>
    <message>
        <source>Longest Triton kernel compiles:</source>
        <translation>编译最久的 Triton 内核：</translation>
    </message>
    <message>
        <source>  %1  %2</source>
        <translation>  %1  %2</translation>
    </message>
    <message>
        <source>Restarted: %1</source>
        <translation>重启：%1</translation>
    </message>
    <message>
        <source>Recompiled: %1</source>
        <translation>重编译：%1</translation>
    </message>
    <message>
        <source>Failed: %1: %2</source>
        <translation>失败：%1：%2</translation>
    </message>
    <message>
        <source>%1 (rank %2)</source>
        <translation>%1（rank %2）</translation>
    </message>
    <message>
        <source>FX %1/%2 · AOT %3/%4</source>
        <translation>FX %1/%2 · AOT %3/%4</translation>
    </message>
    <message>
        <source>Dynamo&apos;s tracing: the whole frame&apos;s compile time less the backend&apos;s</source>
        <translation>Dynamo 追踪：整个帧的编译时间减去后端时间</translation>
    </message>
    <message>
        <source>AOTAutograd: the backend&apos;s time less Inductor&apos;s (joint graph, partition)</source>
        <translation>AOTAutograd：后端时间减去 Inductor 时间（联合图、划分）</translation>
    </message>
    <message>
        <source>Inductor&apos;s passes, lowering and scheduling: its time less code generation</source>
        <translation>Inductor 的 pass、降级与调度：其时间减去代码生成</translation>
    </message>
    <message>
        <source>Code generation, Triton compiles and autotuning included</source>
        <translation>代码生成，含 Triton 编译与自动调优</translation>
    </message>
    <message>
        <source>A backward Inductor compiled at its first call (bwd_compilation_metrics)</source>
        <translation>首次调用时由 Inductor 编译的反向（bwd_compilation_metrics）</translation>
    </message>
    <message>
        <source>Cache hits of lookups: Inductor&apos;s FX graph cache and AOTAutograd&apos;s (local and remote)</source>
        <translation>缓存命中/查找次数：Inductor 的 FX 图缓存与 AOTAutograd 缓存（本地与远程）</translation>
    </message>
    <message>
        <source>Dynamo&apos;s guard_count metric (it counts more than the guard tree&apos;s leaves)</source>
        <translation>Dynamo 的 guard_count 指标（比守卫树的叶子数多）</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <source>Frame</source>
        <translation>帧</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Compile time</source>
        <translation>编译时间</translation>
    </message>
    <message>
        <source>Dynamo</source>
        <translation>Dynamo</translation>
    </message>
    <message>
        <source>AOTAutograd</source>
        <translation>AOTAutograd</translation>
    </message>
    <message>
        <source>Inductor</source>
        <translation>Inductor</translation>
    </message>
    <message>
        <source>Code generation</source>
        <translation>代码生成</translation>
    </message>
    <message>
        <source>Backward at first call</source>
        <translation>首次调用时的反向</translation>
    </message>
    <message>
        <source>Cache hits</source>
        <translation>缓存命中</translation>
    </message>
    <message>
        <source>Graph breaks</source>
        <translation>图中断</translation>
    </message>
    <message>
        <source>Dynamo guard_count</source>
        <translation>Dynamo guard_count</translation>
    </message>
</context>
<context>
    <name>lathe::views::CompilesView</name>
    <message>
        <source>Compile time (s)</source>
        <translation>编译时间（秒）</translation>
    </message>
    <message>
        <source>No compiles: open a TORCH_TRACE log to see what each compile cost.</source>
        <translation>没有编译：打开 TORCH_TRACE 日志以查看每次编译的开销。</translation>
    </message>
    <message>
        <source>The log has no compile times (no compilation_metrics).</source>
        <translation>该日志没有编译时间（无 compilation_metrics）。</translation>
    </message>
    <message>
        <source>Not broken down</source>
        <translation>未细分</translation>
    </message>
    <message numerus="yes">
        <source>%n compile(s) with times, %1 in all; double-click a bar or a row for its graphs.</source>
        <translation>
            <numerusform>%n 次编译有时间记录，共 %1；双击条形或行查看其图。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>lathe::views::DiagnosticsModel</name>
    <message numerus="yes">
        <source>%n more diagnostic(s) not kept</source>
        <translation>
            <numerusform>另有 %n 条诊断未保留</numerusform>
        </translation>
    </message>
    <message>
        <source>note</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>严重程度</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>位置</translation>
    </message>
</context>
<context>
    <name>lathe::views::GanttView</name>
    <message>
        <source>Time in the step (ms)</source>
        <translation>单步内时间（毫秒）</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>H2D copy</source>
        <translation>H2D 拷贝</translation>
    </message>
    <message>
        <source>D2H copy</source>
        <translation>D2H 拷贝</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>正在规划…</translation>
    </message>
    <message>
        <source>No plan yet: select a graph.</source>
        <translation>尚无规划：请选择一个图。</translation>
    </message>
    <message>
        <source> · weights copied %1</source>
        <translation> · 拷贝权重 %1</translation>
    </message>
    <message>
        <source> · bars: layer segments and weight copies</source>
        <translation> · 条形：层段与权重拷贝</translation>
    </message>
    <message>
        <source>%1 → %2 ms (%3)</source>
        <translation>%1 → %2 毫秒（%3）</translation>
    </message>
    <message>
        <source>Stall: compute waits for weights before %1
%2</source>
        <translation>停顿：计算在 %1 之前等待权重
%2</translation>
    </message>
    <message>
        <source>Compute: %1
%2
executions %3–%4 (click to select the node under the cursor)</source>
        <translation>计算：%1
%2
执行 %3–%4（点击以选中光标下的节点）</translation>
    </message>
    <message>
        <source>Kernel: %1 (execution %2)
%3</source>
        <translation>内核：%1（执行 %2）
%3</translation>
    </message>
    <message>
        <source>Host to device: %1, %2
%3%4</source>
        <translation>主机到设备：%1，%2
%3%4</translation>
    </message>
    <message>
        <source>
starts in the previous step&apos;s tail</source>
        <translation>
在上一步的尾部开始</translation>
    </message>
    <message>
        <source>Device to host: %1, %2
%3</source>
        <translation>设备到主机：%1，%2
%3</translation>
    </message>
    <message>
        <source>Step %1 on %2 · compute %3</source>
        <translation>在 %2 上单步 %1 · 计算 %3</translation>
    </message>
    <message>
        <source> · no stalls</source>
        <translation> · 无停顿</translation>
    </message>
    <message numerus="yes">
        <source> · %n stall(s) waiting for weights, %1 in all</source>
        <translation>
            <numerusform> · %n 次等待权重的停顿，共 %1</numerusform>
        </translation>
    </message>
    <message>
        <source> · bars: kernels (every weight resident, nothing to copy)</source>
        <translation> · 条形：内核（所有权重常驻，无需拷贝）</translation>
    </message>
    <message>
        <source> · node times measured by %1</source>
        <translation> · 节点耗时由 %1 实测</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphDiffModel</name>
    <message>
        <source>changed</source>
        <translation>已更改</translation>
    </message>
    <message>
        <source>only in A</source>
        <translation>仅在 A 中</translation>
    </message>
    <message>
        <source>only in B</source>
        <translation>仅在 B 中</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>name (matched by op and source line)</source>
        <translation>名称（按算子和源代码行匹配）</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>变化</translation>
    </message>
    <message>
        <source>Node in A</source>
        <translation>A 中的节点</translation>
    </message>
    <message>
        <source>Node in B</source>
        <translation>B 中的节点</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Value in A</source>
        <translation>A 中的值</translation>
    </message>
    <message>
        <source>Value in B</source>
        <translation>B 中的值</translation>
    </message>
    <message>
        <source>What differs</source>
        <translation>差异</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphMinimap</name>
    <message>
        <source>The whole graph: click or drag to move the view</source>
        <translation>整个图：点击或拖动以移动视图</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphNodesModel</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Module / source</source>
        <translation>模块 / 源码</translation>
    </message>
    <message>
        <source>Measured %1 by %2; the model estimated %3 (%4)</source>
        <translation>%2 实测 %1；模型估计 %3（%4）</translation>
    </message>
    <message>
        <source>The model&apos;s estimate on the target GPU (a fused kernel&apos;s time shared among its nodes)</source>
        <translation>模型在目标 GPU 上的估计（融合内核的耗时由其节点分摊）</translation>
    </message>
    <message>
        <source>What the loaded profile measured (File › Load Profile…)</source>
        <translation>已加载的性能剖析的实测值（文件 › 加载性能剖析…）</translation>
    </message>
    <message>
        <source>Est. time</source>
        <translation>估计耗时</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>saved</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>recomputed</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>The plan&apos;s recompute decision: kept for the backward, or computed again there</source>
        <translation>规划的重计算决策：为反向保留，或在反向中重新计算</translation>
    </message>
    <message>
        <source>The plan&apos;s fusion group: nodes with one number run as one kernel</source>
        <translation>规划的融合组：编号相同的节点作为一个内核运行</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>Saved / recomputed</source>
        <translation>保存 / 重计算</translation>
    </message>
    <message>
        <source>Fusion group</source>
        <translation>融合组</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphView</name>
    <message>
        <source>Fit</source>
        <translation>适应窗口</translation>
    </message>
    <message>
        <source>Fit the graph to the window</source>
        <translation>使图适应窗口大小</translation>
    </message>
    <message numerus="yes">
        <source>Laying out %n node(s)…</source>
        <translation>
            <numerusform>正在布局 %n 个节点…</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not lay out %1: %2</source>
        <translation>无法布局 %1：%2</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Double-click to open.</source>
        <translation>双击展开。</translation>
    </message>
    <message>
        <source>Double-click the frame to close it.</source>
        <translation>双击边框以折叠。</translation>
    </message>
    <message>
        <source>Previous match (Shift+F3)</source>
        <translation>上一个匹配（Shift+F3）</translation>
    </message>
    <message>
        <source>Next match (Enter, F3)</source>
        <translation>下一个匹配（Enter、F3）</translation>
    </message>
    <message>
        <source>Op category</source>
        <translation>算子类别</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Fusion group</source>
        <translation>融合组</translation>
    </message>
    <message>
        <source>Saved / recomputed</source>
        <translation>保存 / 重计算</translation>
    </message>
    <message>
        <source>Offload unit</source>
        <translation>卸载单元</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Estimated time</source>
        <translation>估计耗时</translation>
    </message>
    <message>
        <source>Fold all</source>
        <translation>全部折叠</translation>
    </message>
    <message>
        <source>Fold repeated layers and close big clusters again</source>
        <translation>重新折叠重复层并收起大簇</translation>
    </message>
    <message>
        <source>Colour by</source>
        <translation>着色依据</translation>
    </message>
    <message>
        <source>Laying out…</source>
        <translation>正在布局…</translation>
    </message>
    <message>
        <source>parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>buffer</source>
        <translation>缓冲区</translation>
    </message>
    <message>
        <source>tangent</source>
        <translation>切向量</translation>
    </message>
    <message>
        <source>symbolic size</source>
        <translation>符号尺寸</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>No plan for this graph yet.</source>
        <translation>此图尚无规划。</translation>
    </message>
    <message>
        <source>pointwise group (shades tell neighbours apart)</source>
        <translation>逐元素组（用深浅区分相邻组）</translation>
    </message>
    <message>
        <source>reduction group</source>
        <translation>归约组</translation>
    </message>
    <message>
        <source>normalization group</source>
        <translation>归一化组</translation>
    </message>
    <message>
        <source>not fused</source>
        <translation>未融合</translation>
    </message>
    <message>
        <source>The plan on show has no recompute decision.</source>
        <translation>当前显示的规划没有重计算决策。</translation>
    </message>
    <message>
        <source>saved for the backward</source>
        <translation>为反向保存</translation>
    </message>
    <message>
        <source>recomputed in the backward</source>
        <translation>在反向中重计算</translation>
    </message>
    <message>
        <source>No layer units in the plan on show.</source>
        <translation>当前显示的规划中没有层单元。</translation>
    </message>
    <message>
        <source>no unit</source>
        <translation>无单元</translation>
    </message>
    <message>
        <source>%1 (resident)</source>
        <translation>%1（常驻）</translation>
    </message>
    <message numerus="yes">
        <source>%n more unit(s) not listed.</source>
        <translation>
            <numerusform>另有 %n 个单元未列出。</numerusform>
        </translation>
    </message>
    <message>
        <source>no tensor</source>
        <translation>无张量</translation>
    </message>
    <message>
        <source>no kernel</source>
        <translation>无内核</translation>
    </message>
    <message>
        <source>Roofline estimate on %1.</source>
        <translation>在 %1 上的 Roofline 估计。</translation>
    </message>
    <message>
        <source>no match</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>No graph is laid out.</source>
        <translation>没有已布局的图。</translation>
    </message>
    <message>
        <source>Graph %1 drawn by Lathe Studio</source>
        <translation>由 Lathe Studio 绘制的图 %1</translation>
    </message>
    <message>
        <source>Cannot write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <source>Export writes .svg or .png files, not %1.</source>
        <translation>导出只支持 .svg 或 .png 文件，不支持 %1。</translation>
    </message>
    <message>
        <source>The graph is too big for an image.</source>
        <translation>图太大，无法导出为图像。</translation>
    </message>
    <message>
        <source>Find: name, op or module path</source>
        <translation>查找：名称、算子或模块路径</translation>
    </message>
    <message>
        <source>Find nodes by name, op or module path (Ctrl+F); Enter or F3 jumps to the next match</source>
        <translation>按名称、算子或模块路径查找节点（Ctrl+F）；按 Enter 或 F3 跳到下一个匹配</translation>
    </message>
    <message>
        <source>Measured by %1 where it timed a node, else the roofline estimate on %2.</source>
        <translation>测过的节点取 %1 的实测值，其余取在 %2 上的 Roofline 估计。</translation>
    </message>
</context>
<context>
    <name>lathe::views::GuardDiffModel</name>
    <message>
        <source>added</source>
        <translation>新增</translation>
    </message>
    <message>
        <source>removed</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>changed</source>
        <translation>变更</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>变化</translation>
    </message>
    <message>
        <source>Guard</source>
        <translation>守卫</translation>
    </message>
    <message>
        <source>Guarded value</source>
        <translation>受守卫的值</translation>
    </message>
    <message>
        <source>Before</source>
        <translation>之前</translation>
    </message>
    <message>
        <source>After</source>
        <translation>之后</translation>
    </message>
</context>
<context>
    <name>lathe::views::GuardTreeModel</name>
    <message>
        <source>key: %1</source>
        <translation>键：%1</translation>
    </message>
    <message>
        <source>value: %1</source>
        <translation>值：%1</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1:%2</source>
        <translation>%1:%2</translation>
    </message>
    <message>
        <source>%1  (%2)</source>
        <translation>%1  (%2)</translation>
    </message>
    <message>
        <source>Broken by a recompile: %1</source>
        <translation>被重编译打破：%1</translation>
    </message>
    <message>
        <source>Guard</source>
        <translation>守卫</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>Guarded value</source>
        <translation>受守卫的值</translation>
    </message>
    <message>
        <source>Python type</source>
        <translation>Python 类型</translation>
    </message>
    <message>
        <source>Accessed by</source>
        <translation>访问方式</translation>
    </message>
    <message>
        <source>User code</source>
        <translation>用户代码</translation>
    </message>
</context>
<context>
    <name>lathe::views::GuardsView</name>
    <message>
        <source>rank %1 · %2</source>
        <translation>rank %1 · %2</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>Filter guards: type, value, code, user code…</source>
        <translation>筛选守卫：类型、值、代码、用户代码…</translation>
    </message>
    <message>
        <source>Compile:</source>
        <translation>编译：</translation>
    </message>
    <message>
        <source>Before:</source>
        <translation>之前：</translation>
    </message>
    <message>
        <source>After:</source>
        <translation>之后：</translation>
    </message>
    <message>
        <source>Recompile reasons</source>
        <translation>重编译原因</translation>
    </message>
    <message>
        <source>Diff of two compiles</source>
        <translation>两次编译的差异</translation>
    </message>
    <message>
        <source>No compile of this capture logged its guards.</source>
        <translation>此捕获中没有任何编译记录了守卫。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 others</source>
        <translation>其他 %1 个</translation>
    </message>
    <message numerus="yes">
        <source>%n guard(s): </source>
        <translation>
            <numerusform>%n 个守卫：</numerusform>
        </translation>
    </message>
    <message>
        <source>  ·  checked in %1 µs</source>
        <translation>  ·  检查耗时 %1 µs</translation>
    </message>
    <message>
        <source>This compile logged no guards.</source>
        <translation>此次编译没有记录守卫。</translation>
    </message>
    <message>
        <source>No later compile of this frame failed these guards.</source>
        <translation>此帧之后的编译都没有使这些守卫失败。</translation>
    </message>
    <message>
        <source>recompiled because this compile&apos;s guards failed:</source>
        <translation>因此次编译的守卫失败而重编译：</translation>
    </message>
    <message>
        <source>No guard of this tree matches the reason.</source>
        <translation>此树中没有守卫与该原因匹配。</translation>
    </message>
    <message>
        <source>This compile exists because guards of</source>
        <translation>此次编译的原因是以下编译的守卫失败：</translation>
    </message>
    <message>
        <source>%1 added · %2 removed · %3 changed · %4 unchanged</source>
        <translation>新增 %1 · 删除 %2 · 变更 %3 · 未变 %4</translation>
    </message>
    <message>
        <source>Guards are recorded in TORCH_TRACE logs and MagiCompiler dumps only.</source>
        <translation>只有 TORCH_TRACE 日志和 MagiCompiler 转储记录守卫。</translation>
    </message>
</context>
<context>
    <name>lathe::views::KernelExporter</name>
    <message>
        <source>No CUDA compiler: exporting kernels needs a CUDA toolkit (nvcc), or libnvrtc and a host C++ compiler.

%1

%2</source>
        <translation>没有 CUDA 编译器：导出内核需要 CUDA 工具包（nvcc），或者 libnvrtc 和主机 C++ 编译器。

%1

%2</translation>
    </message>
    <message>
        <source>Looking for a CUDA compiler…</source>
        <translation>正在查找 CUDA 编译器…</translation>
    </message>
    <message>
        <source>NVRTC %1 (%2)</source>
        <translation>NVRTC %1（%2）</translation>
    </message>
    <message numerus="yes">
        <source>Generating kernels for %n fusion group(s)…</source>
        <translation>
            <numerusform>正在为 %n 个融合组生成内核…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Compiling %n kernel(s) with %1…</source>
        <translation>
            <numerusform>正在使用 %1 编译 %n 个内核…</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::MagiTimelineModel</name>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>cache %1</source>
        <translation>缓存 %1</translation>
    </message>
    <message>
        <source>cache %1 (%2)</source>
        <translation>缓存 %1（%2）</translation>
    </message>
    <message>
        <source>compile %1</source>
        <translation>编译 %1</translation>
    </message>
    <message>
        <source>cache store %1</source>
        <translation>缓存写入 %1</translation>
    </message>
    <message>
        <source>%1 pieces</source>
        <translation>%1 个分段</translation>
    </message>
    <message>
        <source>%1 scheduler nodes</source>
        <translation>%1 个调度节点</translation>
    </message>
    <message>
        <source>shape %1</source>
        <translation>形状 %1</translation>
    </message>
    <message>
        <source>restart: %1</source>
        <translation>重启：%1</translation>
    </message>
    <message>
        <source>before</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>after</source>
        <translation>结束</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>mark</source>
        <translation>标记</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>图</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>Lifecycle</source>
        <translation>生命周期</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>耗时</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
</context>
<context>
    <name>lathe::views::MagiTimelineView</name>
    <message>
        <source>Time since the first event (s)</source>
        <translation>距第一个事件的时间（秒）</translation>
    </message>
    <message>
        <source>%1 · rank %2</source>
        <translation>%1 · rank %2</translation>
    </message>
    <message>
        <source>%1 has no timeline (no timeline_events/timeline.jsonl).</source>
        <translation>%1 没有时间线（没有 timeline_events/timeline.jsonl）。</translation>
    </message>
    <message>
        <source>No MagiCompiler dump: open a magi_depyf folder to see its compile lifecycle.</source>
        <translation>没有 MagiCompiler 转储：打开 magi_depyf 文件夹以查看其编译生命周期。</translation>
    </message>
    <message>
        <source>Lifecycle run</source>
        <translation>生命周期运行</translation>
    </message>
    <message>
        <source>Failed run</source>
        <translation>失败的运行</translation>
    </message>
    <message>
        <source>Mark (no before event)</source>
        <translation>标记（无开始事件）</translation>
    </message>
    <message numerus="yes">
        <source>%1: %n event(s) over %2</source>
        <translation>
            <numerusform>%1：%n 个事件，历时 %2</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n failed run(s)</source>
        <translation>
            <numerusform>，%n 次失败的运行</numerusform>
        </translation>
    </message>
    <message>
        <source>; click a span for its event and files.</source>
        <translation>；点击时间段查看其事件和文件。</translation>
    </message>
    <message>
        <source>Selected</source>
        <translation>已选择</translation>
    </message>
    <message>
        <source>MagiCompiler wrote no file for this event.</source>
        <translation>MagiCompiler 没有为此事件写入文件。</translation>
    </message>
    <message>
        <source>Could not read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>at %1</source>
        <translation>于 %1</translation>
    </message>
    <message>
        <source>took %1</source>
        <translation>耗时 %1</translation>
    </message>
</context>
<context>
    <name>lathe::views::MemoryCategory</name>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>saved</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>recomputed</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>temporaries</source>
        <translation>临时值</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>prefetched</source>
        <translation>预取</translation>
    </message>
</context>
<context>
    <name>lathe::views::MemoryTimelineView</name>
    <message>
        <source>Execution</source>
        <translation>执行顺序</translation>
    </message>
    <message>
        <source>← forward</source>
        <translation>← 前向</translation>
    </message>
    <message>
        <source>backward →</source>
        <translation>反向 →</translation>
    </message>
    <message>
        <source>Pin as baseline</source>
        <translation>固定为基线</translation>
    </message>
    <message>
        <source>Clear baseline</source>
        <translation>清除基线</translation>
    </message>
    <message>
        <source>Load memory snapshot…</source>
        <translation>加载内存快照…</translation>
    </message>
    <message>
        <source>Hide snapshot</source>
        <translation>隐藏快照</translation>
    </message>
    <message>
        <source>Keep this plan&apos;s total on the plot as an outline, to compare the next plans with it.</source>
        <translation>将此规划的总量以轮廓线保留在图上，用于与之后的规划比较。</translation>
    </message>
    <message>
        <source>Draw a CUDA memory snapshot&apos;s allocated bytes (torch.cuda.memory._dump_snapshot) over the plan, to compare the prediction with a measured run.</source>
        <translation>在规划上叠加 CUDA 内存快照（torch.cuda.memory._dump_snapshot）的已分配字节，用于比较预测与实测。</translation>
    </message>
    <message>
        <source>baseline: %1 (peak %2)</source>
        <translation>基线：%1（峰值 %2）</translation>
    </message>
    <message>
        <source>budget %1</source>
        <translation>预算 %1</translation>
    </message>
    <message>
        <source>Load a CUDA memory snapshot</source>
        <translation>加载 CUDA 内存快照</translation>
    </message>
    <message>
        <source>CUDA memory snapshots (*.pickle);;All files (*)</source>
        <translation>CUDA 内存快照 (*.pickle);;所有文件 (*)</translation>
    </message>
    <message>
        <source>snapshot %1, allocated</source>
        <translation>快照 %1，已分配</translation>
    </message>
    <message>
        <source>budget %1 cannot be met</source>
        <translation>无法满足预算 %1</translation>
    </message>
    <message>
        <source>peak %1 at %2</source>
        <translation>峰值 %1，位于 %2</translation>
    </message>
    <message>
        <source>Live memory (%1)</source>
        <translation>存活内存（%1）</translation>
    </message>
    <message numerus="yes">
        <source>measured (%1): %2 median, %n step(s)</source>
        <translation>
            <numerusform>实测（%1）：中位步长 %2，共 %n 步</numerusform>
        </translation>
    </message>
    <message>
        <source>measured peak %1 (%2 above the %3 held before)</source>
        <translation>实测峰值 %1（比步前已占用的 %3 高 %2）</translation>
    </message>
    <message>
        <source>The run measured no peak: %1 keeps no allocator statistics.</source>
        <translation>本次运行未测得峰值：%1 不提供内存分配器统计。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Loading the snapshot %1 cancelled</source>
        <translation>已取消加载快照 %1</translation>
    </message>
    <message>
        <source>Could not load the snapshot %1: %2</source>
        <translation>无法加载快照 %1：%2</translation>
    </message>
    <message>
        <source>The snapshot %1 has no allocation trace: record one with torch.cuda.memory._record_memory_history() before the steps.</source>
        <translation>快照 %1 没有分配记录：请在运行这些步骤之前用 torch.cuda.memory._record_memory_history() 记录。</translation>
    </message>
    <message>
        <source>%1 memory %2</source>
        <translation>%1 显存 %2</translation>
    </message>
    <message>
        <source>%1 memory %2: the step does not fit</source>
        <translation>%1 显存 %2：该步骤放不下</translation>
    </message>
    <message>
        <source>%1 · execution %2 (%3)</source>
        <translation>%1 · 第 %2 次执行（%3）</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>held %1</source>
        <translation>占用 %1</translation>
    </message>
    <message>
        <source>  %1 %2</source>
        <translation>  %1 %2</translation>
    </message>
    <message>
        <source>starts at %1</source>
        <translation>开始于 %1</translation>
    </message>
    <message>
        <source>iteration %1 of the %2 it recorded (events %3–%4; iterations are found where memory comes back down between steps), the one with its peak,</source>
        <translation>其记录的 %2 次迭代中的第 %1 次（事件 %3–%4；迭代按步之间内存回落之处划分），即含峰值的那一次，</translation>
    </message>
    <message>
        <source>its whole trace (%1 events: one iteration),</source>
        <translation>其整个轨迹（%1 个事件：一次迭代），</translation>
    </message>
    <message>
        <source>Measured peak %1, planned %2 (%3).</source>
        <translation>实测峰值 %1，计划 %2（%3）。</translation>
    </message>
    <message>
        <source>Snapshot %1 (device %2): %3 spread evenly over this plan&apos;s %4 executions, so the curves share the step&apos;s ends but not a clock. %5</source>
        <translation>快照 %1（设备 %2）：%3 均匀分布在此计划的 %4 次执行上，因此两条曲线共享步的起止，但不共享时钟。%5</translation>
    </message>
    <message>
        <source>%1: iteration %2 of %3 over the step. %4</source>
        <translation>%1：第 %2 次迭代（共 %3 次）覆盖在该步上。%4</translation>
    </message>
    <message>
        <source>%1 over the step. %2</source>
        <translation>%1 覆盖在该步上。%2</translation>
    </message>
    <message>
        <source>largest values:</source>
        <translation>最大的值：</translation>
    </message>
    <message>
        <source>  %1 %2 (%3)</source>
        <translation>  %1 %2（%3）</translation>
    </message>
    <message>
        <source>, dead: kept for %1 by buffer reuse</source>
        <translation>，已不再使用：缓冲区复用为 %1 保留</translation>
    </message>
</context>
<context>
    <name>lathe::views::NodeInspector</name>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Select a node to see its details.</source>
        <translation>选择一个节点以查看详情。</translation>
    </message>
    <message>
        <source>Kernel</source>
        <translation>内核</translation>
    </message>
    <message>
        <source>none (no device work)</source>
        <translation>无（不在设备上执行）</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Bound by</source>
        <translation>瓶颈</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>浮点运算数</translation>
    </message>
    <message>
        <source>Bytes moved</source>
        <translation>传输字节</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>开销</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>注释</translation>
    </message>
    <message>
        <source>Synthetic</source>
        <translation>合成</translation>
    </message>
    <message>
        <source>added by the loader</source>
        <translation>由加载器添加</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Strides</source>
        <translation>步长</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Table entry</source>
        <translation>表项</translation>
    </message>
    <message>
        <source>Fusible</source>
        <translation>可融合</translation>
    </message>
    <message>
        <source>Compute sensitive</source>
        <translation>计算敏感</translation>
    </message>
    <message>
        <source>Subgraph boundary</source>
        <translation>子图边界</translation>
    </message>
    <message>
        <source>Operator</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Estimated cost on %1</source>
        <translation>在 %1 上的估计开销</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Users (%1)</source>
        <translation>使用者（%1）</translation>
    </message>
    <message>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <source> in %1</source>
        <translation>，位于 %1</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>Annotation</source>
        <translation>标注</translation>
    </message>
    <message>
        <source>Provenance</source>
        <translation>来源</translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>另有 %n 个</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 as %2</source>
        <translation>%1 中为 %2</translation>
    </message>
    <message>
        <source>Also in:</source>
        <translation>也出现在：</translation>
    </message>
    <message>
        <source>%1 (its share of a fused kernel; %2 alone)</source>
        <translation>%1（其在融合内核中的份额；单独运行为 %2）</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>not timed by the profile&apos;s run</source>
        <translation>性能剖析的运行未测此节点</translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation>估计</translation>
    </message>
    <message>
        <source>Model error</source>
        <translation>模型误差</translation>
    </message>
    <message>
        <source>Measured by</source>
        <translation>实测来源</translation>
    </message>
    <message>
        <source>Measured beside estimated</source>
        <translation>实测与估计对照</translation>
    </message>
</context>
<context>
    <name>lathe::views::OffloadRunView</name>
    <message>
        <source>No weight-offload run: open a run folder of lathe.compile(..., offload=...).</source>
        <translation>没有权重卸载运行：请打开 lathe.compile(..., offload=...) 的运行目录。</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>simulated</source>
        <translation>模拟</translation>
    </message>
    <message>
        <source>%1 compute</source>
        <translation>%1 计算</translation>
    </message>
    <message>
        <source>%1 H2D</source>
        <translation>%1 主机到设备</translation>
    </message>
    <message>
        <source>measured D2H</source>
        <translation>实测 设备到主机</translation>
    </message>
    <message>
        <source>simulated D2H (not modelled)</source>
        <translation>模拟 设备到主机（未建模）</translation>
    </message>
    <message>
        <source>Weight offload, one %1 step under %2 on %3: measured %4, simulated %5</source>
        <translation>权重卸载，%3 上按 %2 策略运行的一个%1步：实测 %4，模拟 %5</translation>
    </message>
    <message>
        <source> (measured/simulated %1)</source>
        <translation>（实测/模拟 %1）</translation>
    </message>
    <message>
        <source>
compute idle %1 measured, %2 simulated · %3 of %4 units resident · H2D %5/s</source>
        <translation>
计算空闲：实测 %1，模拟 %2 · %4 个单元中 %3 个常驻 · 主机到设备 %5/秒</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Simulated</source>
        <translation>模拟</translation>
    </message>
    <message>
        <source>%1: compute idle before %2 (waiting for its weights, or code outside the layer units)
%3</source>
        <translation>%1：%2 之前计算空闲（等待其权重，或层单元之外的代码）
%3</translation>
    </message>
    <message>
        <source>%1 compute: %2
%3</source>
        <translation>%1 计算：%2
%3</translation>
    </message>
    <message>
        <source>%1 weight copy: %2, %3
%4%5</source>
        <translation>%1 权重拷贝：%2，%3
%4%5</translation>
    </message>
    <message>
        <source>
starts in the previous step</source>
        <translation>
始于上一步</translation>
    </message>
    <message>
        <source>%1 gradient copy: a tensor of %2
%3</source>
        <translation>%1 梯度拷贝：%2 的一个张量
%3</translation>
    </message>
    <message>
        <source>training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>inference</source>
        <translation>推理</translation>
    </message>
    <message>
        <source> backward</source>
        <translation> 反向</translation>
    </message>
</context>
<context>
    <name>lathe::views::OpCategory</name>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>matmul</source>
        <translation>矩阵乘</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>注意力</translation>
    </message>
    <message>
        <source>convolution</source>
        <translation>卷积</translation>
    </message>
    <message>
        <source>pointwise</source>
        <translation>逐元素</translation>
    </message>
    <message>
        <source>reduction</source>
        <translation>归约</translation>
    </message>
    <message>
        <source>normalization</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>data_movement</source>
        <translation>数据搬运</translation>
    </message>
    <message>
        <source>view</source>
        <translation>视图</translation>
    </message>
    <message>
        <source>creation</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>collective</source>
        <translation>集合通信</translation>
    </message>
    <message>
        <source>getitem</source>
        <translation>取元素</translation>
    </message>
    <message>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>higher_order</source>
        <translation>高阶算子</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>自定义</translation>
    </message>
</context>
<context>
    <name>lathe::views::ParetoView</name>
    <message>
        <source>Recompute time (ms)</source>
        <translation>重计算时间（毫秒）</translation>
    </message>
    <message>
        <source>Each point is a saved set no other beats on both peak and recompute time. Click one to plan with its peak as the budget.</source>
        <translation>每个点都是一个在峰值和重计算时间上均不被其他集合超越的保存集合。点击一个点，即以其峰值作为预算进行规划。</translation>
    </message>
    <message>
        <source>No graph selected.</source>
        <translation>未选择图。</translation>
    </message>
    <message>
        <source>The recompute frontier needs a joint (training) graph.</source>
        <translation>重计算前沿需要联合（训练）图。</translation>
    </message>
    <message>
        <source>Computing the recompute frontier…</source>
        <translation>正在计算重计算前沿…</translation>
    </message>
    <message>
        <source>The recompute frontier is computed when the budget panel or this view needs it.</source>
        <translation>重计算前沿在预算面板或此视图需要时计算。</translation>
    </message>
    <message>
        <source>frontier (budget policy)</source>
        <translation>前沿（budget 策略）</translation>
    </message>
    <message>
        <source>this plan: recompute(%1)</source>
        <translation>当前规划：recompute(%1)</translation>
    </message>
    <message numerus="yes">
        <source>Recompute frontier on %1
%n point(s), peaks %2 to %3</source>
        <translation>
            <numerusform>%1 上的重计算前沿
%n 个点，峰值 %2 到 %3</numerusform>
        </translation>
    </message>
    <message>
        <source>Peak memory of the step (%1)</source>
        <translation>单步峰值内存（%1）</translation>
    </message>
</context>
<context>
    <name>lathe::views::PipelinePanel</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>◀ Back</source>
        <translation>◀ 后退</translation>
    </message>
    <message>
        <source>Forward ▶</source>
        <translation>前进 ▶</translation>
    </message>
    <message>
        <source>Statistic</source>
        <translation>统计量</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>The selected step&apos;s changes</source>
        <translation>所选步骤的变化</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>正在运行…</translation>
    </message>
    <message>
        <source>Pipeline failed: %1</source>
        <translation>流水线失败：%1</translation>
    </message>
    <message>
        <source>0. initial</source>
        <translation>0. 初始</translation>
    </message>
    <message>
        <source>%1. %2</source>
        <translation>%1. %2</translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) on %1 in %2</source>
        <translation>
            <numerusform>在 %1 上 %n 个步骤，用时 %2</numerusform>
        </translation>
    </message>
    <message>
        <source>planned peak</source>
        <translation>规划峰值</translation>
    </message>
    <message>
        <source>planned step time</source>
        <translation>规划单步时间</translation>
    </message>
    <message>
        <source>pass time</source>
        <translation>pass 耗时</translation>
    </message>
    <message>
        <source>(no change)</source>
        <translation>（无变化）</translation>
    </message>
    <message>
        <source>(the graph before any pass)</source>
        <translation>（运行任何 pass 之前的图）</translation>
    </message>
</context>
<context>
    <name>lathe::views::PlanFile</name>
    <message>
        <source>pieces</source>
        <translation>分段</translation>
    </message>
    <message>
        <source>layer units</source>
        <translation>层单元</translation>
    </message>
    <message>
        <source>fusion groups</source>
        <translation>融合组</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>offload</source>
        <translation>卸载</translation>
    </message>
</context>
<context>
    <name>lathe::views::PlanSession</name>
    <message>
        <source>No graph to plan</source>
        <translation>没有可规划的图</translation>
    </message>
    <message>
        <source>%1 was not applied: another graph was selected while it was read</source>
        <translation>未应用 %1：读取期间选择了另一个图</translation>
    </message>
    <message>
        <source>No graph to price: select one first</source>
        <translation>没有可定价的图：请先选择一个图</translation>
    </message>
    <message>
        <source>Loading the profile was cancelled</source>
        <translation>已取消加载性能剖析</translation>
    </message>
</context>
<context>
    <name>lathe::views::SavedTensorLedgerModel</name>
    <message>
        <source>Saved tensor</source>
        <translation>保存的张量</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>Saved at</source>
        <translation>保存于</translation>
    </message>
    <message>
        <source>Last backward use</source>
        <translation>反向中最后使用</translation>
    </message>
    <message>
        <source>Held for</source>
        <translation>持有时长</translation>
    </message>
    <message>
        <source>Bytes × time</source>
        <translation>字节 × 时间</translation>
    </message>
    <message>
        <source>Why kept</source>
        <translation>保留原因</translation>
    </message>
    <message numerus="yes">
        <source>%n execution(s) from saved to last read</source>
        <translation>
            <numerusform>从保存到最后一次读取共 %n 次执行</numerusform>
        </translation>
    </message>
    <message>
        <source>%1·ms</source>
        <translation>%1·ms</translation>
    </message>
</context>
<context>
    <name>lathe::views::SnapshotAllocationsModel</name>
    <message>
        <source>%1:%2 in %3</source>
        <translation>%1:%2，位于 %3</translation>
    </message>
    <message>
        <source>before recording</source>
        <translation>记录开始之前</translation>
    </message>
    <message>
        <source>event %1</source>
        <translation>事件 %1</translation>
    </message>
    <message>
        <source>%1 (event %2)</source>
        <translation>%1（事件 %2）</translation>
    </message>
    <message>
        <source>No call stack was recorded for this allocation.</source>
        <translation>该分配没有记录调用栈。</translation>
    </message>
    <message>
        <source>Python frames, innermost first:</source>
        <translation>Python 栈帧（由内向外）：</translation>
    </message>
    <message>
        <source>  (none recorded)</source>
        <translation>  （未记录）</translation>
    </message>
    <message>
        <source>Native frames:</source>
        <translation>原生栈帧：</translation>
    </message>
    <message>
        <source>— (no user frame)</source>
        <translation>—（无用户栈帧）</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Allocated at</source>
        <translation>分配于</translation>
    </message>
    <message>
        <source>User frame</source>
        <translation>用户栈帧</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
</context>
<context>
    <name>lathe::views::SnapshotView</name>
    <message>
        <source>Go to the peak</source>
        <translation>跳到峰值</translation>
    </message>
    <message>
        <source>The device whose trace is shown</source>
        <translation>显示其轨迹的设备</translation>
    </message>
    <message>
        <source>Select an allocation to see where it was made (▶ marks the user&apos;s frame).</source>
        <translation>选择一个分配以查看其分配位置（▶ 标记用户栈帧）。</translation>
    </message>
    <message numerus="yes">
        <source>cuda:%1 · %n event(s)</source>
        <translation>
            <numerusform>cuda:%1 · %n 个事件</numerusform>
        </translation>
    </message>
    <message>
        <source>Open a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) to see its memory over time.</source>
        <translation>打开 CUDA 内存快照（torch.cuda.memory._dump_snapshot）以查看其内存随时间的变化。</translation>
    </message>
    <message numerus="yes">
        <source>&lt;b&gt;%1&lt;/b&gt; · cuda:%2 · %n trace event(s)</source>
        <translation>
            <numerusform>&lt;b&gt;%1&lt;/b&gt; · cuda:%2 · %n 个轨迹事件</numerusform>
        </translation>
    </message>
    <message>
        <source> over %1</source>
        <translation>，历时 %1</translation>
    </message>
    <message>
        <source>&lt;br&gt;Peak allocated &lt;b&gt;%1&lt;/b&gt;</source>
        <translation>&lt;br&gt;已分配峰值 &lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <source> at %1</source>
        <translation>，位于 %1</translation>
    </message>
    <message>
        <source> at event %1</source>
        <translation>，位于事件 %1</translation>
    </message>
    <message numerus="yes">
        <source> (%n allocation(s) live)</source>
        <translation>
            <numerusform>（%n 个分配存活）</numerusform>
        </translation>
    </message>
    <message>
        <source> · peak reserved %1 · %2 allocated before recording, %3 at the end</source>
        <translation> · 保留峰值 %1 · 记录前已分配 %2，结束时 %3</translation>
    </message>
    <message numerus="yes">
        <source> · &lt;b&gt;%n out-of-memory event(s)&lt;/b&gt;</source>
        <translation>
            <numerusform> · &lt;b&gt;%n 个内存不足事件&lt;/b&gt;</numerusform>
        </translation>
    </message>
    <message>
        <source> · the reserved bytes do not add up (a damaged or partial trace)</source>
        <translation> · 保留字节数对不上（轨迹损坏或不完整）</translation>
    </message>
    <message>
        <source>reserved (segments)</source>
        <translation>保留（段）</translation>
    </message>
    <message>
        <source>allocated</source>
        <translation>已分配</translation>
    </message>
    <message>
        <source>Time since the first event (s)</source>
        <translation>自第一个事件起的时间（秒）</translation>
    </message>
    <message>
        <source>Trace event</source>
        <translation>轨迹事件</translation>
    </message>
    <message>
        <source>Memory (%1)</source>
        <translation>内存（%1）</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>before the first event</source>
        <translation>第一个事件之前</translation>
    </message>
    <message>
        <source>at %1 (after event %2, %3)</source>
        <translation>在 %1（事件 %2 之后，%3）</translation>
    </message>
    <message>
        <source>after event %1 (%2)</source>
        <translation>事件 %1 之后（%2）</translation>
    </message>
    <message numerus="yes">
        <source>Allocator state %1: &lt;b&gt;%2&lt;/b&gt; in %n live allocation(s)</source>
        <translation>
            <numerusform>分配器状态 %1：%n 个存活分配共 &lt;b&gt;%2&lt;/b&gt;</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, the %n largest listed</source>
        <translation>
            <numerusform>，列出最大的 %n 个</numerusform>
        </translation>
    </message>
    <message>
        <source> — the peak</source>
        <translation> — 峰值</translation>
    </message>
    <message>
        <source>. Click the plot to see another moment.</source>
        <translation>。点击图表查看其他时刻。</translation>
    </message>
    <message>
        <source>event %1</source>
        <translation>事件 %1</translation>
    </message>
    <message>
        <source>%1
allocated %2
reserved %3</source>
        <translation>%1
已分配 %2
保留 %3</translation>
    </message>
</context>
<context>
    <name>lathe::views::StageLinks</name>
    <message>
        <source>Dynamo graph</source>
        <translation>Dynamo 图</translation>
    </message>
    <message>
        <source>pre-grad graph (before passes)</source>
        <translation>pre-grad 图（pass 之前）</translation>
    </message>
    <message>
        <source>pre-grad graph</source>
        <translation>pre-grad 图</translation>
    </message>
    <message>
        <source>joint graph</source>
        <translation>联合图</translation>
    </message>
    <message>
        <source>joint-pass graph (before passes)</source>
        <translation>joint-pass 图（pass 之前）</translation>
    </message>
    <message>
        <source>joint-pass graph</source>
        <translation>joint-pass 图</translation>
    </message>
    <message>
        <source>forward graph</source>
        <translation>前向图</translation>
    </message>
    <message>
        <source>backward graph</source>
        <translation>反向图</translation>
    </message>
    <message>
        <source>inference graph</source>
        <translation>推理图</translation>
    </message>
    <message>
        <source>post-grad graph (before passes)</source>
        <translation>post-grad 图（pass 之前）</translation>
    </message>
    <message>
        <source>post-grad graph</source>
        <translation>post-grad 图</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>Workbench for PyTorch compiler artifacts: TORCH_TRACE logs (files or folders of ranks), torch.export .pt2 archives, CUDA memory snapshots.</source>
        <translation>PyTorch 编译产物工作台：TORCH_TRACE 日志（文件或各 rank 的文件夹）、torch.export .pt2 归档、CUDA 内存快照。</translation>
    </message>
    <message>
        <source>Render the window headless at %1x%2 to &lt;png&gt; and exit.</source>
        <translation>以 %1x%2 无界面渲染窗口到 &lt;png&gt; 并退出。</translation>
    </message>
    <message>
        <source>png</source>
        <translation>png</translation>
    </message>
    <message>
        <source>View to show in the screenshot: %1.</source>
        <translation>截图中显示的视图：%1。</translation>
    </message>
    <message>
        <source>name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>expected at most one path, got %1</source>
        <translation>最多只接受一个路径，实际得到 %1 个</translation>
    </message>
    <message>
        <source>view &apos;%1&apos; is not available yet; available: %2</source>
        <translation>视图“%1”尚不可用；可用视图：%2</translation>
    </message>
    <message>
        <source>no path given and the bundled example is missing</source>
        <translation>未提供路径，且缺少内置示例</translation>
    </message>
    <message>
        <source>Interface language for this run: %1 (default: the one chosen in the Language menu, else the system&apos;s).</source>
        <translation>本次运行的界面语言：%1（默认：“语言”菜单中选择的语言，否则跟随系统）。</translation>
    </message>
    <message>
        <source>code</source>
        <translation>语言代码</translation>
    </message>
    <message>
        <source>unknown language &apos;%1&apos;; available: %2</source>
        <translation>未知语言“%1”；可用语言：%2</translation>
    </message>
    <message>
        <source>could not open %1: %2</source>
        <translation>无法打开 %1：%2</translation>
    </message>
    <message>
        <source>could not show the plan %1: %2</source>
        <translation>无法显示规划 %1：%2</translation>
    </message>
    <message>
        <source>Artifact or plan bundle (.json) to open (default: the bundled example).</source>
        <translation>要打开的产物或规划包（.json）（默认：自带的示例）。</translation>
    </message>
    <message>
        <source>could not apply the profile %1: %2</source>
        <translation>无法应用性能剖析 %1：%2</translation>
    </message>
    <message>
        <source>Price the plan with a lathe.profile/1 file (lathe measure -o), as File › Load Profile… does.</source>
        <translation>用 lathe.profile/1 文件（lathe measure -o）为规划定价，与“文件 › 加载性能剖析…”相同。</translation>
    </message>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>could not compare with %1: %2</source>
        <translation>无法与 %1 比较：%2</translation>
    </message>
    <message>
        <source>Compare the graph on show with a capture or plan bundle (.json), as File › Compare With… does, and show the Compare tab.</source>
        <translation>将当前图与捕获或计划包 (.json) 比较（与 文件 › 比较… 相同），并显示比较标签页。</translation>
    </message>
    <message>
        <source>path</source>
        <translation>路径</translation>
    </message>
</context>
</TS>
