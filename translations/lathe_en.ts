<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>PassStats</name>
    <message>
        <source>fusion groups</source>
        <translation>fusion groups</translation>
    </message>
    <message>
        <source>pointwise groups</source>
        <translation>pointwise groups</translation>
    </message>
    <message>
        <source>groups without a reduction</source>
        <translation>groups without a reduction</translation>
    </message>
    <message>
        <source>reduction groups</source>
        <translation>reduction groups</translation>
    </message>
    <message>
        <source>groups around a reduction</source>
        <translation>groups around a reduction</translation>
    </message>
    <message>
        <source>normalization groups</source>
        <translation>normalization groups</translation>
    </message>
    <message>
        <source>groups around a normalization (softmax, layer_norm)</source>
        <translation>groups around a normalization (softmax, layer_norm)</translation>
    </message>
    <message>
        <source>fused nodes</source>
        <translation>fused nodes</translation>
    </message>
    <message>
        <source>nodes in a group</source>
        <translation>nodes in a group</translation>
    </message>
    <message>
        <source>kernels before fusion</source>
        <translation>kernels before fusion</translation>
    </message>
    <message>
        <source>calls other than views, getitems and host ops</source>
        <translation>calls other than views, getitems and host ops</translation>
    </message>
    <message>
        <source>kernels after fusion</source>
        <translation>kernels after fusion</translation>
    </message>
    <message>
        <source>kernels left once each group is one</source>
        <translation>kernels left once each group is one</translation>
    </message>
    <message>
        <source>traffic removed</source>
        <translation>traffic removed</translation>
    </message>
    <message>
        <source>memory traffic fusion removes (in-group reads and writes)</source>
        <translation>memory traffic fusion removes (in-group reads and writes)</translation>
    </message>
    <message>
        <source>step time</source>
        <translation>step time</translation>
    </message>
    <message>
        <source>the simulated step, copies included</source>
        <translation>the simulated step, copies included</translation>
    </message>
    <message>
        <source>forward and backward, estimated</source>
        <translation>forward and backward, estimated</translation>
    </message>
    <message>
        <source>compute time</source>
        <translation>compute time</translation>
    </message>
    <message>
        <source>the step&apos;s compute alone</source>
        <translation>the step&apos;s compute alone</translation>
    </message>
    <message>
        <source>stalls</source>
        <translation>stalls</translation>
    </message>
    <message>
        <source>compute stalled waiting for copies</source>
        <translation>compute stalled waiting for copies</translation>
    </message>
    <message>
        <source>floor</source>
        <translation>floor</translation>
    </message>
    <message>
        <source>max(compute, streamed bytes over the host link)</source>
        <translation>max(compute, streamed bytes over the host link)</translation>
    </message>
    <message>
        <source>peak weights</source>
        <translation>peak weights</translation>
    </message>
    <message>
        <source>the most weight bytes on the GPU</source>
        <translation>the most weight bytes on the GPU</translation>
    </message>
    <message>
        <source>weight budget</source>
        <translation>weight budget</translation>
    </message>
    <message>
        <source>the weight budget planned for</source>
        <translation>the weight budget planned for</translation>
    </message>
    <message>
        <source>peak budget</source>
        <translation>peak budget</translation>
    </message>
    <message>
        <source>the peak budget asked for (policy=budget)</source>
        <translation>the peak budget asked for (policy=budget)</translation>
    </message>
    <message>
        <source>streamed per step</source>
        <translation>streamed per step</translation>
    </message>
    <message>
        <source>weight bytes copied in per step</source>
        <translation>weight bytes copied in per step</translation>
    </message>
    <message>
        <source>resident units</source>
        <translation>resident units</translation>
    </message>
    <message>
        <source>layer units kept on the GPU</source>
        <translation>layer units kept on the GPU</translation>
    </message>
    <message>
        <source>saved values</source>
        <translation>saved values</translation>
    </message>
    <message>
        <source>tensors the forward saves</source>
        <translation>tensors the forward saves</translation>
    </message>
    <message>
        <source>saved for the backward</source>
        <translation>saved for the backward</translation>
    </message>
    <message>
        <source>saved for the backward, weights left out</source>
        <translation>saved for the backward, weights left out</translation>
    </message>
    <message>
        <source>recomputed nodes</source>
        <translation>recomputed nodes</translation>
    </message>
    <message>
        <source>forward nodes the backward runs again</source>
        <translation>forward nodes the backward runs again</translation>
    </message>
    <message>
        <source>recompute time</source>
        <translation>recompute time</translation>
    </message>
    <message>
        <source>the backward&apos;s recomputation</source>
        <translation>the backward&apos;s recomputation</translation>
    </message>
    <message>
        <source>peak</source>
        <translation>peak</translation>
    </message>
    <message>
        <source>the step&apos;s estimated peak memory</source>
        <translation>the step&apos;s estimated peak memory</translation>
    </message>
    <message>
        <source>budget met</source>
        <translation>budget met</translation>
    </message>
    <message>
        <source>whether a plan within the budget was found</source>
        <translation>whether a plan within the budget was found</translation>
    </message>
    <message>
        <source>offloaded values</source>
        <translation>offloaded values</translation>
    </message>
    <message>
        <source>saved values held in host memory</source>
        <translation>saved values held in host memory</translation>
    </message>
    <message>
        <source>offloaded bytes</source>
        <translation>offloaded bytes</translation>
    </message>
    <message>
        <source>bytes of the saved values held in host memory</source>
        <translation>bytes of the saved values held in host memory</translation>
    </message>
    <message>
        <source>pieces</source>
        <translation>pieces</translation>
    </message>
    <message>
        <source>pieces the split ops cut the graph into</source>
        <translation>pieces the split ops cut the graph into</translation>
    </message>
    <message>
        <source>split ops</source>
        <translation>split ops</translation>
    </message>
    <message>
        <source>ops the graph is split at</source>
        <translation>ops the graph is split at</translation>
    </message>
    <message>
        <source>layer units</source>
        <translation>layer units</translation>
    </message>
    <message>
        <source>smallest unit&apos;s weights</source>
        <translation>smallest unit&apos;s weights</translation>
    </message>
    <message>
        <source>weights of the smallest unit</source>
        <translation>weights of the smallest unit</translation>
    </message>
    <message>
        <source>largest unit&apos;s weights</source>
        <translation>largest unit&apos;s weights</translation>
    </message>
    <message>
        <source>weights of the largest unit</source>
        <translation>weights of the largest unit</translation>
    </message>
    <message>
        <source>executions</source>
        <translation>executions</translation>
    </message>
    <message>
        <source>nodes run in the step, recomputed ones again</source>
        <translation>nodes run in the step, recomputed ones again</translation>
    </message>
    <message>
        <source>kernel launches</source>
        <translation>kernel launches</translation>
    </message>
    <message>
        <source>kernels the step launches</source>
        <translation>kernels the step launches</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>yes</translation>
    </message>
    <message>
        <source>no</source>
        <translation>no</translation>
    </message>
    <message>
        <source>fusion groups (each one generated kernel)</source>
        <translation>fusion groups (each one generated kernel)</translation>
    </message>
</context>
<context>
    <name>lathe::passes</name>
    <message>
        <source>pointwise</source>
        <translation>pointwise</translation>
    </message>
    <message>
        <source>reduction</source>
        <translation>reduction</translation>
    </message>
    <message>
        <source>normalization</source>
        <translation>normalization</translation>
    </message>
    <message>
        <source>+ group %1 (%2): %3</source>
        <translation>+ group %1 (%2): %3</translation>
    </message>
    <message>
        <source>offload(%1): %2 of %3 units resident, step %4 (floor %5, bubbles %6), peak weights %7 of %8</source>
        <translation>offload(%1): %2 of %3 units resident, step %4 (floor %5, bubbles %6), peak weights %7 of %8</translation>
    </message>
    <message>
        <source>= resident %1 (%2)</source>
        <translation>= resident %1 (%2)</translation>
    </message>
    <message>
        <source>+ stream %1: copy %2 .. %3 in the previous step&apos;s tail, when %4 is reached, for %5</source>
        <translation>+ stream %1: copy %2 .. %3 in the previous step&apos;s tail, when %4 is reached, for %5</translation>
    </message>
    <message>
        <source>+ stream %1: copy %2 .. %3, when %4 is reached, for %5</source>
        <translation>+ stream %1: copy %2 .. %3, when %4 is reached, for %5</translation>
    </message>
    <message>
        <source>needed by the backward</source>
        <translation>needed by the backward</translation>
    </message>
    <message>
        <source>min cut</source>
        <translation>min cut</translation>
    </message>
    <message>
        <source>primal read by the backward</source>
        <translation>primal read by the backward</translation>
    </message>
    <message>
        <source>compute sensitive: %1</source>
        <translation>compute sensitive: %1</translation>
    </message>
    <message>
        <source>needed by the backward, not recomputable</source>
        <translation>needed by the backward, not recomputable</translation>
    </message>
    <message>
        <source>a weight: held for the whole step anyway</source>
        <translation>a weight: held for the whole step anyway</translation>
    </message>
    <message>
        <source>an input of the step: nothing to recompute</source>
        <translation>an input of the step: nothing to recompute</translation>
    </message>
    <message>
        <source>must run once (%1 op)</source>
        <translation>must run once (%1 op)</translation>
    </message>
    <message>
        <source>kept: recomputing it alone would take %1 to free %2</source>
        <translation>kept: recomputing it alone would take %1 to free %2</translation>
    </message>
    <message>
        <source>recompute(%1): save %2 (%3), recompute %4, step peak %5</source>
        <translation>recompute(%1): save %2 (%3), recompute %4, step peak %5</translation>
    </message>
    <message numerus="yes">
        <source>%n value(s)</source>
        <translation>
            <numerusform>%n value</numerusform>
            <numerusform>%n values</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform>
            <numerusform>%n nodes</numerusform>
        </translation>
    </message>
    <message>
        <source>! budget %1 is below the smallest peak found, %2; the plan with that peak is kept</source>
        <translation>! budget %1 is below the smallest peak found, %2; the plan with that peak is kept</translation>
    </message>
    <message>
        <source>+ saved %1  (%2)</source>
        <translation>+ saved %1  (%2)</translation>
    </message>
    <message>
        <source>+ recomputed %1</source>
        <translation>+ recomputed %1</translation>
    </message>
    <message>
        <source>recompute(%1): offload %2 (%3) to host memory, copies hidden behind %4 of forward and %5 of backward</source>
        <translation>recompute(%1): offload %2 (%3) to host memory, copies hidden behind %4 of forward and %5 of backward</translation>
    </message>
    <message numerus="yes">
        <source>%n saved value(s)</source>
        <translation>
            <numerusform>%n saved value</numerusform>
            <numerusform>%n saved values</numerusform>
        </translation>
    </message>
    <message>
        <source>the backward&apos;s start</source>
        <translation>the backward&apos;s start</translation>
    </message>
    <message>
        <source>+ offloaded %1  (%2; on host from %3 to %4)</source>
        <translation>+ offloaded %1  (%2; on host from %3 to %4)</translation>
    </message>
    <message>
        <source>recompute(budget): no memory given: the least peak at no more step time than torch&apos;s saved set (%1, peak %2)</source>
        <translation>recompute(budget): no memory given: the least peak at no more step time than torch&apos;s saved set (%1, peak %2)</translation>
    </message>
    <message>
        <source>listed in the file</source>
        <translation>listed in the file</translation>
    </message>
    <message>
        <source>+ piece %1: %2 (split op %3)</source>
        <translation>+ piece %1: %2 (split op %3)</translation>
    </message>
    <message>
        <source>+ piece %1: %2 (after split op %3)</source>
        <translation>+ piece %1: %2 (after split op %3)</translation>
    </message>
    <message>
        <source>+ piece %1: %2</source>
        <translation>+ piece %1: %2</translation>
    </message>
    <message>
        <source>+ unit %1: %2, %3</source>
        <translation>+ unit %1: %2, %3</translation>
    </message>
    <message numerus="yes">
        <source>%n weight(s)</source>
        <translation>
            <numerusform>%n weight</numerusform>
            <numerusform>%n weights</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::studio::Language</name>
    <message>
        <source>System language</source>
        <translation>System language</translation>
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
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>No graph selected</source>
        <translation>No graph selected</translation>
    </message>
    <message>
        <source>Filter nodes: name, target, category, shape, source…</source>
        <translation>Filter nodes: name, target, category, shape, source…</translation>
    </message>
    <message>
        <source>Find Node</source>
        <translation>Find Node</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>Graph</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>Nodes</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Artifact</source>
        <translation>Artifact</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>Inspector</translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation>Pipeline</translation>
    </message>
    <message>
        <source>Memory timeline</source>
        <translation>Memory timeline</translation>
    </message>
    <message>
        <source>Diagnostics</source>
        <translation>Diagnostics</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;View</translation>
    </message>
    <message>
        <source>Gantt</source>
        <translation>Gantt</translation>
    </message>
    <message>
        <source>Saved tensors</source>
        <translation>Saved tensors</translation>
    </message>
    <message>
        <source>Pareto</source>
        <translation>Pareto</translation>
    </message>
    <message>
        <source>Budget</source>
        <translation>Budget</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;File</translation>
    </message>
    <message>
        <source>&amp;Open File…</source>
        <translation>&amp;Open File…</translation>
    </message>
    <message>
        <source>Open &amp;Folder…</source>
        <translation>Open &amp;Folder…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>Open &amp;Recent</translation>
    </message>
    <message>
        <source>Open &amp;Example</source>
        <translation>Open &amp;Example</translation>
    </message>
    <message>
        <source>&amp;Export View…</source>
        <translation>&amp;Export View…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Quit</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Help</translation>
    </message>
    <message>
        <source>&amp;About Lathe Studio</source>
        <translation>&amp;About Lathe Studio</translation>
    </message>
    <message>
        <source>About Lathe Studio</source>
        <translation>About Lathe Studio</translation>
    </message>
    <message>
        <source>Lathe Studio %1: a workbench for PyTorch compiler artifacts (TORCH_TRACE logs, torch.export archives, CUDA memory snapshots).</source>
        <translation>Lathe Studio %1: a workbench for PyTorch compiler artifacts (TORCH_TRACE logs, torch.export archives, CUDA memory snapshots).</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Language</translation>
    </message>
    <message>
        <source>No file to open (the bundled example is missing).</source>
        <translation>No file to open (the bundled example is missing).</translation>
    </message>
    <message>
        <source>Open artifact</source>
        <translation>Open artifact</translation>
    </message>
    <message>
        <source>No graph is drawn yet: select one in the artifact tree.</source>
        <translation>No graph is drawn yet: select one in the artifact tree.</translation>
    </message>
    <message>
        <source>Export the graph view</source>
        <translation>Export the graph view</translation>
    </message>
    <message>
        <source>SVG image (*.svg);;PNG image (*.png)</source>
        <translation>SVG image (*.svg);;PNG image (*.png)</translation>
    </message>
    <message>
        <source>Exported the graph view to %1</source>
        <translation>Exported the graph view to %1</translation>
    </message>
    <message>
        <source>Open a folder of TORCH_TRACE rank logs</source>
        <translation>Open a folder of TORCH_TRACE rank logs</translation>
    </message>
    <message>
        <source>Loading %1 cancelled</source>
        <translation>Loading %1 cancelled</translation>
    </message>
    <message>
        <source>Could not open %1: %2</source>
        <translation>Could not open %1: %2</translation>
    </message>
    <message>
        <source>Could not open %1; the Diagnostics pane says why.</source>
        <translation>Could not open %1; the Diagnostics pane says why.</translation>
    </message>
    <message>
        <source>%1 — Lathe Studio</source>
        <translation>%1 — Lathe Studio</translation>
    </message>
    <message numerus="yes">
        <source>Loaded %1: %n graph(s)</source>
        <translation>
            <numerusform>Loaded %1: %n graph</numerusform>
            <numerusform>Loaded %1: %n graphs</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n diagnostic(s)</source>
        <translation>
            <numerusform>, %n diagnostic</numerusform>
            <numerusform>, %n diagnostics</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 · %2 nodes · %3 calls · %4 inputs</source>
        <translation>%1 · %2 nodes · %3 calls · %4 inputs</translation>
    </message>
    <message>
        <source>Guards</source>
        <translation>Guards</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 · FX graph</source>
        <translation>%1 · FX graph</translation>
    </message>
    <message>
        <source>Load Memory &amp;Snapshot onto the Timeline…</source>
        <translation>Load Memory &amp;Snapshot onto the Timeline…</translation>
    </message>
    <message>
        <source>Cancel Export</source>
        <translation>Cancel Export</translation>
    </message>
    <message>
        <source>PyTorch artifacts and Lathe plans (*.log *.log.gz *.gz *.pt2 *.pickle *.txt *.json);;Lathe plans (*.plan.json *.json);;All files (*)</source>
        <translation>PyTorch artifacts and Lathe plans (*.log *.log.gz *.gz *.pt2 *.pickle *.txt *.json);;Lathe plans (*.plan.json *.json);;All files (*)</translation>
    </message>
    <message>
        <source>%1 · %2 — Lathe Studio</source>
        <translation>%1 · %2 — Lathe Studio</translation>
    </message>
    <message>
        <source>&amp;Save Plan…</source>
        <translation>&amp;Save Plan…</translation>
    </message>
    <message>
        <source>Write the plan on show (the last step of its pipeline) as a lathe.plan/1 bundle</source>
        <translation>Write the plan on show (the last step of its pipeline) as a lathe.plan/1 bundle</translation>
    </message>
    <message>
        <source>Export &amp;Kernels…</source>
        <translation>Export &amp;Kernels…</translation>
    </message>
    <message>
        <source>Generate and compile CUDA kernels for the plan&apos;s fusion groups into a folder, as lathe export does</source>
        <translation>Generate and compile CUDA kernels for the plan&apos;s fusion groups into a folder, as lathe export does</translation>
    </message>
    <message>
        <source>Exporting kernels to %1…</source>
        <translation>Exporting kernels to %1…</translation>
    </message>
    <message>
        <source>Cancelling the export (a compiler run finishes first; its output is thrown away)…</source>
        <translation>Cancelling the export (a compiler run finishes first; its output is thrown away)…</translation>
    </message>
    <message>
        <source>Could not open the plan %1: %2</source>
        <translation>Could not open the plan %1: %2</translation>
    </message>
    <message>
        <source>Open Plan</source>
        <translation>Open Plan</translation>
    </message>
    <message>
        <source>Could not open the plan %1. Nothing was changed.</source>
        <translation>Could not open the plan %1. Nothing was changed.</translation>
    </message>
    <message>
        <source>Could not plan on the plan&apos;s hardware: %1</source>
        <translation>Could not plan on the plan&apos;s hardware: %1</translation>
    </message>
    <message>
        <source>The plan&apos;s pipeline failed: %1</source>
        <translation>The plan&apos;s pipeline failed: %1</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline failed here.</source>
        <translation>Plan %1: its pipeline failed here.</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline re-run here on %2 makes the decisions it records.</source>
        <translation>Plan %1: its pipeline re-run here on %2 makes the decisions it records.</translation>
    </message>
    <message>
        <source>Opened the plan %1: graph %2, %3</source>
        <translation>Opened the plan %1: graph %2, %3</translation>
    </message>
    <message>
        <source>Plan %1: its pipeline re-run here decides otherwise (%2). The views show the re-run, not the bundle.</source>
        <translation>Plan %1: its pipeline re-run here decides otherwise (%2). The views show the re-run, not the bundle.</translation>
    </message>
    <message>
        <source>The plan %1 was not reproduced: %2 differ</source>
        <translation>The plan %1 was not reproduced: %2 differ</translation>
    </message>
    <message>
        <source>Save Plan</source>
        <translation>Save Plan</translation>
    </message>
    <message>
        <source>Lathe plans (*.plan.json);;All files (*)</source>
        <translation>Lathe plans (*.plan.json);;All files (*)</translation>
    </message>
    <message>
        <source>Saving the plan to %1…</source>
        <translation>Saving the plan to %1…</translation>
    </message>
    <message>
        <source>Could not save the plan to %1</source>
        <translation>Could not save the plan to %1</translation>
    </message>
    <message>
        <source>Could not save the plan to %1; no file was changed.</source>
        <translation>Could not save the plan to %1; no file was changed.</translation>
    </message>
    <message>
        <source>Saved the plan of %1 to %2</source>
        <translation>Saved the plan of %1 to %2</translation>
    </message>
    <message>
        <source>Export Kernels: a new or empty folder, or an earlier export to replace</source>
        <translation>Export Kernels: a new or empty folder, or an earlier export to replace</translation>
    </message>
    <message>
        <source>Kernel export cancelled; %1 is as it was</source>
        <translation>Kernel export cancelled; %1 is as it was</translation>
    </message>
    <message>
        <source>Kernel export failed; %1 is as it was</source>
        <translation>Kernel export failed; %1 is as it was</translation>
    </message>
    <message>
        <source>Export Kernels</source>
        <translation>Export Kernels</translation>
    </message>
    <message>
        <source>No kernels were exported; %1 is as it was.</source>
        <translation>No kernels were exported; %1 is as it was.</translation>
    </message>
    <message numerus="yes">
        <source>%1 of %n fusion group(s) generated</source>
        <translation>
            <numerusform>%1 of %n fusion group generated</numerusform>
            <numerusform>%1 of %n fusion groups generated</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n group(s) not generated: %1</source>
        <translation>
            <numerusform>%n group not generated: %1</numerusform>
            <numerusform>%n groups not generated: %1</numerusform>
        </translation>
    </message>
    <message>
        <source>Compiled with %1 for %2.</source>
        <translation>Compiled with %1 for %2.</translation>
    </message>
    <message>
        <source>%1; the kernel bundle is in %2</source>
        <translation>%1; the kernel bundle is in %2</translation>
    </message>
    <message>
        <source>%1. The kernel bundle (manifest.json, liblathe_kernels.so, kernels.fatbin, sources) is in %2.</source>
        <translation>%1. The kernel bundle (manifest.json, liblathe_kernels.so, kernels.fatbin, sources) is in %2.</translation>
    </message>
    <message>
        <source>Save Plan… records the export in the plan bundle.</source>
        <translation>Save Plan… records the export in the plan bundle.</translation>
    </message>
    <message>
        <source>Offload run</source>
        <translation>Offload run</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>Load &amp;Profile…</source>
        <translation>Load &amp;Profile…</translation>
    </message>
    <message>
        <source>Price the graph on show as a lathe.profile/1 file measured it (lathe measure CAPTURE -o profile.json)</source>
        <translation>Price the graph on show as a lathe.profile/1 file measured it (lathe measure CAPTURE -o profile.json)</translation>
    </message>
    <message>
        <source>&amp;Clear Profile</source>
        <translation>&amp;Clear Profile</translation>
    </message>
    <message>
        <source>Plan with the model&apos;s estimates again</source>
        <translation>Plan with the model&apos;s estimates again</translation>
    </message>
    <message>
        <source>Reading the profile %1…</source>
        <translation>Reading the profile %1…</translation>
    </message>
    <message>
        <source>Load Profile</source>
        <translation>Load Profile</translation>
    </message>
    <message>
        <source>Lathe profiles (*.json);;All files (*)</source>
        <translation>Lathe profiles (*.json);;All files (*)</translation>
    </message>
    <message>
        <source>The profile was not applied: %1</source>
        <translation>The profile was not applied: %1</translation>
    </message>
    <message>
        <source>The profile was not applied; the plan is priced as it was.</source>
        <translation>The profile was not applied; the plan is priced as it was.</translation>
    </message>
    <message>
        <source>Back to the model&apos;s estimates</source>
        <translation>Back to the model&apos;s estimates</translation>
    </message>
    <message>
        <source>CUDA memory snapshot · %1</source>
        <translation>CUDA memory snapshot · %1</translation>
    </message>
    <message>
        <source>Loaded %1: a CUDA memory snapshot</source>
        <translation>Loaded %1: a CUDA memory snapshot</translation>
    </message>
    <message>
        <source>Snapshot</source>
        <translation>Snapshot</translation>
    </message>
    <message>
        <source>Compiles</source>
        <translation>Compiles</translation>
    </message>
    <message>
        <source>Compile %1 logged no graph</source>
        <translation>Compile %1 logged no graph</translation>
    </message>
    <message>
        <source>Lifecycle</source>
        <translation>Lifecycle</translation>
    </message>
    <message>
        <source>Export &amp;Report…</source>
        <translation>Export &amp;Report…</translation>
    </message>
    <message>
        <source>Write one self-contained HTML file with the plan on show, its pictures, the compiles and the diagnostics, as lathe report does</source>
        <translation>Write one self-contained HTML file with the plan on show, its pictures, the compiles and the diagnostics, as lathe report does</translation>
    </message>
    <message>
        <source>Export Report</source>
        <translation>Export Report</translation>
    </message>
    <message>
        <source>HTML reports (*.html);;All files (*)</source>
        <translation>HTML reports (*.html);;All files (*)</translation>
    </message>
    <message>
        <source>Writing the report of %1 to %2…</source>
        <translation>Writing the report of %1 to %2…</translation>
    </message>
    <message>
        <source>Writing the report to %1 (no plan on show: compiles and diagnostics only)…</source>
        <translation>Writing the report to %1 (no plan on show: compiles and diagnostics only)…</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>cancelled</translation>
    </message>
    <message>
        <source>Could not write the report to %1</source>
        <translation>Could not write the report to %1</translation>
    </message>
    <message>
        <source>Could not write the report to %1; no file was changed.</source>
        <translation>Could not write the report to %1; no file was changed.</translation>
    </message>
    <message>
        <source>Wrote the report to %1</source>
        <translation>Wrote the report to %1</translation>
    </message>
    <message>
        <source>&amp;Compare With…</source>
        <translation>&amp;Compare With…</translation>
    </message>
    <message>
        <source>Compare the graph on show with a graph of another capture, or its plan with a plan bundle</source>
        <translation>Compare the graph on show with a graph of another capture, or its plan with a plan bundle</translation>
    </message>
    <message>
        <source>Compare With</source>
        <translation>Compare With</translation>
    </message>
    <message>
        <source>Captures and plans (*.log *.gz *.txt *.pt2 *.json);;All files (*)</source>
        <translation>Captures and plans (*.log *.gz *.txt *.pt2 *.json);;All files (*)</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>Compare</translation>
    </message>
    <message>
        <source>Diagnostics (%1)</source>
        <translation>Diagnostics (%1)</translation>
    </message>
    <message>
        <source>captured on the CPU, priced as on %1</source>
        <translation>captured on the CPU, priced as on %1</translation>
    </message>
</context>
<context>
    <name>lathe::views</name>
    <message>
        <source>%1 in %2</source>
        <translation>%1 in %2</translation>
    </message>
</context>
<context>
    <name>lathe::views::ArtifactLoader</name>
    <message>
        <source>%1 is not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot); open captures and .pt2 archives with File › Open.</source>
        <translation>%1 is not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot); open captures and .pt2 archives with File › Open.</translation>
    </message>
</context>
<context>
    <name>lathe::views::ArtifactTreeModel</name>
    <message numerus="yes">
        <source>%n recompile reason(s)</source>
        <translation>
            <numerusform>%n recompile reason</numerusform>
            <numerusform>%n recompile reasons</numerusform>
        </translation>
    </message>
    <message>
        <source>%1:%2 in %3</source>
        <translation>%1:%2 in %3</translation>
    </message>
    <message>
        <source>rank %1 · %2</source>
        <translation>rank %1 · %2</translation>
    </message>
    <message>
        <source>Guards</source>
        <translation>Guards</translation>
    </message>
    <message>
        <source>Inductor output code</source>
        <translation>Inductor output code</translation>
    </message>
    <message>
        <source>Inductor output code #%1</source>
        <translation>Inductor output code #%1</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s)</source>
        <translation>
            <numerusform>%n line</numerusform>
            <numerusform>%n lines</numerusform>
        </translation>
    </message>
    <message>
        <source>Outside any compile</source>
        <translation>Outside any compile</translation>
    </message>
    <message>
        <source>exported program</source>
        <translation>exported program</translation>
    </message>
    <message>
        <source>Memory snapshot</source>
        <translation>Memory snapshot</translation>
    </message>
    <message numerus="yes">
        <source>%n segment(s)</source>
        <translation>
            <numerusform>%n segment</numerusform>
            <numerusform>%n segments</numerusform>
        </translation>
    </message>
    <message>
        <source>Diagnostics</source>
        <translation>Diagnostics</translation>
    </message>
    <message>
        <source>%1 errors, %2 warnings, %3 notes</source>
        <translation>%1 errors, %2 warnings, %3 notes</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>Nodes</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message numerus="yes">
        <source>Dynamo: %n guard(s)</source>
        <translation>
            <numerusform>Dynamo: %n guard</numerusform>
            <numerusform>Dynamo: %n guards</numerusform>
        </translation>
    </message>
    <message>
        <source>Decompiled bytecode</source>
        <translation>Decompiled bytecode</translation>
    </message>
    <message>
        <source>Inductor output code · %1</source>
        <translation>Inductor output code · %1</translation>
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
        <translation>Peak memory the step may use; below the slider&apos;s left end no saved set fits.</translation>
    </message>
    <message>
        <source>Memory budget: from the least peak recompute can reach to the peak without recompute.</source>
        <translation>Memory budget: from the least peak recompute can reach to the peak without recompute.</translation>
    </message>
    <message>
        <source>Share of the weights kept resident on the GPU; the others are streamed in just in time (offload policy heuristic).</source>
        <translation>Share of the weights kept resident on the GPU; the others are streamed in just in time (offload policy heuristic).</translation>
    </message>
    <message>
        <source>Custom JSON…</source>
        <translation>Custom JSON…</translation>
    </message>
    <message>
        <source>Memory budget</source>
        <translation>Memory budget</translation>
    </message>
    <message>
        <source>Resident weights</source>
        <translation>Resident weights</translation>
    </message>
    <message>
        <source>Target GPU</source>
        <translation>Target GPU</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>&lt;i&gt;Re-planning…&lt;/i&gt;</source>
        <translation>&lt;i&gt;Re-planning…&lt;/i&gt;</translation>
    </message>
    <message>
        <source>Hardware profile</source>
        <translation>Hardware profile</translation>
    </message>
    <message>
        <source>Lathe hardware profiles (*.json);;All files (*)</source>
        <translation>Lathe hardware profiles (*.json);;All files (*)</translation>
    </message>
    <message>
        <source>Select a graph to plan.</source>
        <translation>Select a graph to plan.</translation>
    </message>
    <message>
        <source>Computing the recompute frontier…</source>
        <translation>Computing the recompute frontier…</translation>
    </message>
    <message>
        <source>The recompute frontier failed: %1</source>
        <translation>The recompute frontier failed: %1</translation>
    </message>
    <message>
        <source>&lt;b&gt;Planning failed:&lt;/b&gt; %1</source>
        <translation>&lt;b&gt;Planning failed:&lt;/b&gt; %1</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step estimate &lt;b&gt;%2&lt;/b&gt; on %3</source>
        <translation>&lt;b&gt;Peak %1&lt;/b&gt; · step estimate &lt;b&gt;%2&lt;/b&gt; on %3</translation>
    </message>
    <message>
        <source>Recompute %1 (policy %2), %3 saved</source>
        <translation>Recompute %1 (policy %2), %3 saved</translation>
    </message>
    <message>
        <source>Offload: %1 streamed per step, stalls %2</source>
        <translation>Offload: %1 streamed per step, stalls %2</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;&lt;b&gt;Budget %1 cannot be met:&lt;/b&gt; no saved set brings the peak below %2; the plan shown is the one with the least peak.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;&lt;b&gt;Budget %1 cannot be met:&lt;/b&gt; no saved set brings the peak below %2; the plan shown is the one with the least peak.&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#2e7d32&apos;&gt;Within the budget of %1.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#2e7d32&apos;&gt;Within the budget of %1.&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;The peak is more than the %1 of %2.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;The peak is more than the %1 of %2.&lt;/span&gt;</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>No recompute: not a joint (training) graph.</source>
        <translation>No recompute: not a joint (training) graph.</translation>
    </message>
    <message>
        <source>Memory budgets choose what a training step recomputes; this graph is planned with offload only.</source>
        <translation>Memory budgets choose what a training step recomputes; this graph is planned with offload only.</translation>
    </message>
    <message numerus="yes">
        <source>Reachable: %1 to %2, %n frontier point(s)</source>
        <translation>
            <numerusform>Reachable: %1 to %2, %n frontier point</numerusform>
            <numerusform>Reachable: %1 to %2, %n frontier points</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 with the most recompute, %2 with none.</source>
        <translation>%1 with the most recompute, %2 with none.</translation>
    </message>
    <message>
        <source>peak unchanged</source>
        <translation>peak unchanged</translation>
    </message>
    <message>
        <source>peak +%1</source>
        <translation>peak +%1</translation>
    </message>
    <message>
        <source>peak −%1</source>
        <translation>peak −%1</translation>
    </message>
    <message>
        <source>&lt;i&gt;Since the last plan: %1, %2 value(s) newly saved, %3 now recomputed.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Since the last plan: %1, %2 value(s) newly saved, %3 now recomputed.&lt;/i&gt;</translation>
    </message>
    <message>
        <source>Offload activations to host memory</source>
        <translation>Offload activations to host memory</translation>
    </message>
    <message>
        <source>Stream weights</source>
        <translation>Stream weights</translation>
    </message>
    <message>
        <source>Saved values whose copies to pinned host memory and back hide behind compute leave the GPU between forward and backward (recompute offload=true); the budget then recomputes less.</source>
        <translation>Saved values whose copies to pinned host memory and back hide behind compute leave the GPU between forward and backward (recompute offload=true); the budget then recomputes less.</translation>
    </message>
    <message>
        <source>Keep only a share of the weights on the GPU and stream the others in just in time (offload policy heuristic). Costs step time where the copies do not hide.</source>
        <translation>Keep only a share of the weights on the GPU and stream the others in just in time (offload policy heuristic). Costs step time where the copies do not hide.</translation>
    </message>
    <message numerus="yes">
        <source>Activations: %n value(s), %1 held in host memory</source>
        <translation>
            <numerusform>Activations: %n value, %1 held in host memory</numerusform>
            <numerusform>Activations: %n values, %1 held in host memory</numerusform>
        </translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#c02020&apos;&gt;Cannot plan on %1: %2&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c02020&apos;&gt;Cannot plan on %1: %2&lt;/span&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured · %3 estimated on %4</source>
        <translation>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured · %3 estimated on %4</translation>
    </message>
    <message>
        <source>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured on %3</source>
        <translation>&lt;b&gt;Peak %1&lt;/b&gt; · step &lt;b&gt;%2&lt;/b&gt; measured on %3</translation>
    </message>
    <message>
        <source>Measured: the plan&apos;s step with each node at the time %1 measured (the others at the model&apos;s estimate). Estimated: the same step as the model alone prices it.</source>
        <translation>Measured: the plan&apos;s step with each node at the time %1 measured (the others at the model&apos;s estimate). Estimated: the same step as the model alone prices it.</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#a15c00&apos;&gt;Captured on the CPU: times and memory are estimated as if it ran on %1.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#a15c00&apos;&gt;Captured on the CPU: times and memory are estimated as if it ran on %1.&lt;/span&gt;</translation>
    </message>
    <message>
        <source>This budget: peak %1, step %2 (recompute %3)</source>
        <translation>This budget: peak %1, step %2 (recompute %3)</translation>
    </message>
    <message>
        <source>; on show: peak %1, step %2</source>
        <translation>; on show: peak %1, step %2</translation>
    </message>
    <message>
        <source>, before offload</source>
        <translation>, before offload</translation>
    </message>
    <message>
        <source>Resident %1 %: weights on the GPU at most %2 of %3, step %4 (stalls %5)</source>
        <translation>Resident %1 %: weights on the GPU at most %2 of %3, step %4 (stalls %5)</translation>
    </message>
    <message>
        <source>Resident %1 %: %2</source>
        <translation>Resident %1 %: %2</translation>
    </message>
</context>
<context>
    <name>lathe::views::CalibrationModel</name>
    <message>
        <source>(estimated − measured) / measured: −50% means the model expected half the measured time</source>
        <translation>(estimated − measured) / measured: −50% means the model expected half the measured time</translation>
    </message>
    <message>
        <source>Op category</source>
        <translation>Op category</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>Nodes</translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation>Estimated</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>Error</translation>
    </message>
</context>
<context>
    <name>lathe::views::CalibrationView</name>
    <message numerus="yes">
        <source>Priced with %1 (%n node(s) measured): the model was %2 off, %3 estimated against %4 measured.</source>
        <translation>
            <numerusform>Priced with %1 (%n node measured): the model was %2 off, %3 estimated against %4 measured.</numerusform>
            <numerusform>Priced with %1 (%n nodes measured): the model was %2 off, %3 estimated against %4 measured.</numerusform>
        </translation>
    </message>
    <message>
        <source>Measured on %1, planned for %2: the plan takes the measured device&apos;s time for every node it timed.</source>
        <translation>Measured on %1, planned for %2: the plan takes the measured device&apos;s time for every node it timed.</translation>
    </message>
    <message>
        <source>No profile applied. File › Load Profile… reads a lathe.profile/1 file (lathe measure CAPTURE -o profile.json) and prices the graph on show as it was measured.</source>
        <translation>No profile applied. File › Load Profile… reads a lathe.profile/1 file (lathe measure CAPTURE -o profile.json) and prices the graph on show as it was measured.</translation>
    </message>
</context>
<context>
    <name>lathe::views::CodeView</name>
    <message>
        <source>Find in code</source>
        <translation>Find in code</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>Previous</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>Next</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <source>Click a node name, or a line naming source nodes, to select that node in %1.</source>
        <translation>Click a node name, or a line naming source nodes, to select that node in %1.</translation>
    </message>
    <message>
        <source>No code selected: pick a graph or an output code entry in the artifact tree.</source>
        <translation>No code selected: pick a graph or an output code entry in the artifact tree.</translation>
    </message>
    <message>
        <source>Not found</source>
        <translation>Not found</translation>
    </message>
    <message numerus="yes">
        <source>%n match(es)</source>
        <translation>
            <numerusform>%n match</numerusform>
            <numerusform>%n matches</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::CompareView</name>
    <message>
        <source>Open B…</source>
        <translation>Open B…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Compare with a graph of another capture, or with a plan bundle and its graph</source>
        <translation>Compare with a graph of another capture, or with a plan bundle and its graph</translation>
    </message>
    <message>
        <source>A:</source>
        <translation>A:</translation>
    </message>
    <message>
        <source>B:</source>
        <translation>B:</translation>
    </message>
    <message>
        <source>Calls</source>
        <translation>Calls</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation>Plan</translation>
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
        <translation>%1 · %2 (the graph on show)</translation>
    </message>
    <message>
        <source>no graph on show</source>
        <translation>no graph on show</translation>
    </message>
    <message>
        <source>loading %1…</source>
        <translation>loading %1…</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>cancelled</translation>
    </message>
    <message>
        <source>this artifact</source>
        <translation>this artifact</translation>
    </message>
    <message>
        <source>%1 was not opened (%2); the comparison on show is unchanged.</source>
        <translation>%1 was not opened (%2); the comparison on show is unchanged.</translation>
    </message>
    <message>
        <source>Select a graph: it is A, compared with B.</source>
        <translation>Select a graph: it is A, compared with B.</translation>
    </message>
    <message>
        <source>No graph to compare with: open another capture or a plan bundle as B.</source>
        <translation>No graph to compare with: open another capture or a plan bundle as B.</translation>
    </message>
    <message numerus="yes">
        <source>The same graph: all %n node(s) match (by name, inputs by position, by op and source line).</source>
        <translation>
            <numerusform>The same graph: all %n node match (by name, inputs by position, by op and source line).</numerusform>
            <numerusform>The same graph: all %n nodes match (by name, inputs by position, by op and source line).</numerusform>
        </translation>
    </message>
    <message>
        <source>A has %1 nodes, B %2. Matched %3 by name, %4 inputs by position and %5 by op and source line; &lt;b&gt;%6 changed, %7 only in A, %8 only in B&lt;/b&gt;. Double-click a row to show its node in A.</source>
        <translation>A has %1 nodes, B %2. Matched %3 by name, %4 inputs by position and %5 by op and source line; &lt;b&gt;%6 changed, %7 only in A, %8 only in B&lt;/b&gt;. Double-click a row to show its node in A.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Plans&lt;/b&gt; A: %1 on %2 · B: %3 on %4%5</source>
        <translation>&lt;b&gt;Plans&lt;/b&gt; A: %1 on %2 · B: %3 on %4%5</translation>
    </message>
    <message>
        <source> (different graphs: decisions compared by node name)</source>
        <translation> (different graphs: decisions compared by node name)</translation>
    </message>
    <message>
        <source>at the peak: %1</source>
        <translation>at the peak: %1</translation>
    </message>
    <message>
        <source>values saved for the backward</source>
        <translation>values saved for the backward</translation>
    </message>
    <message>
        <source>values recomputed</source>
        <translation>values recomputed</translation>
    </message>
    <message>
        <source>saved only by this plan</source>
        <translation>saved only by this plan</translation>
    </message>
    <message>
        <source>fusion groups</source>
        <translation>fusion groups</translation>
    </message>
    <message numerus="yes">
        <source>… %n more</source>
        <translation>
            <numerusform>… %n more</numerusform>
            <numerusform>… %n more</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::CompileMetricsModel</name>
    <message>
        <source>Compile %1 of %2 (%3:%4)</source>
        <translation>Compile %1 of %2 (%3:%4)</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Joint-graph passes (in AOTAutograd)</source>
        <translation>Joint-graph passes (in AOTAutograd)</translation>
    </message>
    <message>
        <source>Pre-grad passes</source>
        <translation>Pre-grad passes</translation>
    </message>
    <message>
        <source>Post-grad passes</source>
        <translation>Post-grad passes</translation>
    </message>
    <message>
        <source>Triton compiles (in code generation)</source>
        <translation>Triton compiles (in code generation)</translation>
    </message>
    <message>
        <source>Tracing thrown away by a restart</source>
        <translation>Tracing thrown away by a restart</translation>
    </message>
    <message>
        <source>Remote caches: FX graph %1 hit(s), %2 miss(es); AOTAutograd %3 hit(s), %4 miss(es)</source>
        <translation>Remote caches: FX graph %1 hit(s), %2 miss(es); AOTAutograd %3 hit(s), %4 miss(es)</translation>
    </message>
    <message>
        <source>Longest Triton kernel compiles:</source>
        <translation>Longest Triton kernel compiles:</translation>
    </message>
    <message>
        <source>  %1  %2</source>
        <translation>  %1  %2</translation>
    </message>
    <message>
        <source>Restarted: %1</source>
        <translation>Restarted: %1</translation>
    </message>
    <message>
        <source>Recompiled: %1</source>
        <translation>Recompiled: %1</translation>
    </message>
    <message>
        <source>Failed: %1: %2</source>
        <translation>Failed: %1: %2</translation>
    </message>
    <message>
        <source>%1 (rank %2)</source>
        <translation>%1 (rank %2)</translation>
    </message>
    <message>
        <source>FX %1/%2 · AOT %3/%4</source>
        <translation>FX %1/%2 · AOT %3/%4</translation>
    </message>
    <message>
        <source>Dynamo&apos;s tracing: the whole frame&apos;s compile time less the backend&apos;s</source>
        <translation>Dynamo&apos;s tracing: the whole frame&apos;s compile time less the backend&apos;s</translation>
    </message>
    <message>
        <source>AOTAutograd: the backend&apos;s time less Inductor&apos;s (joint graph, partition)</source>
        <translation>AOTAutograd: the backend&apos;s time less Inductor&apos;s (joint graph, partition)</translation>
    </message>
    <message>
        <source>Inductor&apos;s passes, lowering and scheduling: its time less code generation</source>
        <translation>Inductor&apos;s passes, lowering and scheduling: its time less code generation</translation>
    </message>
    <message>
        <source>Code generation, Triton compiles and autotuning included</source>
        <translation>Code generation, Triton compiles and autotuning included</translation>
    </message>
    <message>
        <source>A backward Inductor compiled at its first call (bwd_compilation_metrics)</source>
        <translation>A backward Inductor compiled at its first call (bwd_compilation_metrics)</translation>
    </message>
    <message>
        <source>Cache hits of lookups: Inductor&apos;s FX graph cache and AOTAutograd&apos;s (local and remote)</source>
        <translation>Cache hits of lookups: Inductor&apos;s FX graph cache and AOTAutograd&apos;s (local and remote)</translation>
    </message>
    <message>
        <source>Dynamo&apos;s guard_count metric (it counts more than the guard tree&apos;s leaves)</source>
        <translation>Dynamo&apos;s guard_count metric (it counts more than the guard tree&apos;s leaves)</translation>
    </message>
    <message>
        <source>Compile</source>
        <translation>Compile</translation>
    </message>
    <message>
        <source>Frame</source>
        <translation>Frame</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>Compile time</source>
        <translation>Compile time</translation>
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
        <translation>Code generation</translation>
    </message>
    <message>
        <source>Backward at first call</source>
        <translation>Backward at first call</translation>
    </message>
    <message>
        <source>Cache hits</source>
        <translation>Cache hits</translation>
    </message>
    <message>
        <source>Graph breaks</source>
        <translation>Graph breaks</translation>
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
        <translation>Compile time (s)</translation>
    </message>
    <message>
        <source>No compiles: open a TORCH_TRACE log to see what each compile cost.</source>
        <translation>No compiles: open a TORCH_TRACE log to see what each compile cost.</translation>
    </message>
    <message>
        <source>The log has no compile times (no compilation_metrics).</source>
        <translation>The log has no compile times (no compilation_metrics).</translation>
    </message>
    <message>
        <source>Not broken down</source>
        <translation>Not broken down</translation>
    </message>
    <message numerus="yes">
        <source>%n compile(s) with times, %1 in all; double-click a bar or a row for its graphs.</source>
        <translation>
            <numerusform>%n compile with times, %1 in all; double-click a bar or a row for its graphs.</numerusform>
            <numerusform>%n compiles with times, %1 in all; double-click a bar or a row for its graphs.</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
</context>
<context>
    <name>lathe::views::DiagnosticsModel</name>
    <message numerus="yes">
        <source>%n more diagnostic(s) not kept</source>
        <translation>
            <numerusform>%n more diagnostic not kept</numerusform>
            <numerusform>%n more diagnostics not kept</numerusform>
        </translation>
    </message>
    <message>
        <source>note</source>
        <translation>note</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>warning</translation>
    </message>
    <message>
        <source>error</source>
        <translation>error</translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>Severity</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Message</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>Location</translation>
    </message>
</context>
<context>
    <name>lathe::views::GanttView</name>
    <message>
        <source>Time in the step (ms)</source>
        <translation>Time in the step (ms)</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>compute</translation>
    </message>
    <message>
        <source>H2D copy</source>
        <translation>H2D copy</translation>
    </message>
    <message>
        <source>D2H copy</source>
        <translation>D2H copy</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>Planning…</translation>
    </message>
    <message>
        <source>No plan yet: select a graph.</source>
        <translation>No plan yet: select a graph.</translation>
    </message>
    <message>
        <source> · weights copied %1</source>
        <translation> · weights copied %1</translation>
    </message>
    <message>
        <source> · bars: layer segments and weight copies</source>
        <translation> · bars: layer segments and weight copies</translation>
    </message>
    <message>
        <source>%1 → %2 ms (%3)</source>
        <translation>%1 → %2 ms (%3)</translation>
    </message>
    <message>
        <source>Stall: compute waits for weights before %1
%2</source>
        <translation>Stall: compute waits for weights before %1
%2</translation>
    </message>
    <message>
        <source>Compute: %1
%2
executions %3–%4 (click to select the node under the cursor)</source>
        <translation>Compute: %1
%2
executions %3–%4 (click to select the node under the cursor)</translation>
    </message>
    <message>
        <source>Kernel: %1 (execution %2)
%3</source>
        <translation>Kernel: %1 (execution %2)
%3</translation>
    </message>
    <message>
        <source>Host to device: %1, %2
%3%4</source>
        <translation>Host to device: %1, %2
%3%4</translation>
    </message>
    <message>
        <source>
starts in the previous step&apos;s tail</source>
        <translation>
starts in the previous step&apos;s tail</translation>
    </message>
    <message>
        <source>Device to host: %1, %2
%3</source>
        <translation>Device to host: %1, %2
%3</translation>
    </message>
    <message>
        <source>Step %1 on %2 · compute %3</source>
        <translation>Step %1 on %2 · compute %3</translation>
    </message>
    <message>
        <source> · no stalls</source>
        <translation> · no stalls</translation>
    </message>
    <message numerus="yes">
        <source> · %n stall(s) waiting for weights, %1 in all</source>
        <translation>
            <numerusform> · %n stall waiting for weights, %1 in all</numerusform>
            <numerusform> · %n stalls waiting for weights, %1 in all</numerusform>
        </translation>
    </message>
    <message>
        <source> · bars: kernels (every weight resident, nothing to copy)</source>
        <translation> · bars: kernels (every weight resident, nothing to copy)</translation>
    </message>
    <message>
        <source> · node times measured by %1</source>
        <translation> · node times measured by %1</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphDiffModel</name>
    <message>
        <source>changed</source>
        <translation>changed</translation>
    </message>
    <message>
        <source>only in A</source>
        <translation>only in A</translation>
    </message>
    <message>
        <source>only in B</source>
        <translation>only in B</translation>
    </message>
    <message>
        <source>kind</source>
        <translation>kind</translation>
    </message>
    <message>
        <source>op</source>
        <translation>op</translation>
    </message>
    <message>
        <source>value</source>
        <translation>value</translation>
    </message>
    <message>
        <source>name (matched by op and source line)</source>
        <translation>name (matched by op and source line)</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>Change</translation>
    </message>
    <message>
        <source>Node in A</source>
        <translation>Node in A</translation>
    </message>
    <message>
        <source>Node in B</source>
        <translation>Node in B</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>Op</translation>
    </message>
    <message>
        <source>Value in A</source>
        <translation>Value in A</translation>
    </message>
    <message>
        <source>Value in B</source>
        <translation>Value in B</translation>
    </message>
    <message>
        <source>What differs</source>
        <translation>What differs</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphMinimap</name>
    <message>
        <source>The whole graph: click or drag to move the view</source>
        <translation>The whole graph: click or drag to move the view</translation>
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
        <translation>Name</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>Op</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>Target</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>Category</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Value</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Role</translation>
    </message>
    <message>
        <source>Module / source</source>
        <translation>Module / source</translation>
    </message>
    <message>
        <source>Measured %1 by %2; the model estimated %3 (%4)</source>
        <translation>Measured %1 by %2; the model estimated %3 (%4)</translation>
    </message>
    <message>
        <source>The model&apos;s estimate on the target GPU (a fused kernel&apos;s time shared among its nodes)</source>
        <translation>The model&apos;s estimate on the target GPU (a fused kernel&apos;s time shared among its nodes)</translation>
    </message>
    <message>
        <source>What the loaded profile measured (File › Load Profile…)</source>
        <translation>What the loaded profile measured (File › Load Profile…)</translation>
    </message>
    <message>
        <source>Est. time</source>
        <translation>Est. time</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>saved</source>
        <translation>saved</translation>
    </message>
    <message>
        <source>recomputed</source>
        <translation>recomputed</translation>
    </message>
    <message>
        <source>The plan&apos;s recompute decision: kept for the backward, or computed again there</source>
        <translation>The plan&apos;s recompute decision: kept for the backward, or computed again there</translation>
    </message>
    <message>
        <source>The plan&apos;s fusion group: nodes with one number run as one kernel</source>
        <translation>The plan&apos;s fusion group: nodes with one number run as one kernel</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>Saved / recomputed</source>
        <translation>Saved / recomputed</translation>
    </message>
    <message>
        <source>Fusion group</source>
        <translation>Fusion group</translation>
    </message>
</context>
<context>
    <name>lathe::views::GraphView</name>
    <message>
        <source>Double-click to open.</source>
        <translation>Double-click to open.</translation>
    </message>
    <message>
        <source>Double-click the frame to close it.</source>
        <translation>Double-click the frame to close it.</translation>
    </message>
    <message>
        <source>Find: name, op or module path</source>
        <translation>Find: name, op or module path</translation>
    </message>
    <message>
        <source>Find nodes by name, op or module path (Ctrl+F); Enter or F3 jumps to the next match</source>
        <translation>Find nodes by name, op or module path (Ctrl+F); Enter or F3 jumps to the next match</translation>
    </message>
    <message>
        <source>Previous match (Shift+F3)</source>
        <translation>Previous match (Shift+F3)</translation>
    </message>
    <message>
        <source>Next match (Enter, F3)</source>
        <translation>Next match (Enter, F3)</translation>
    </message>
    <message>
        <source>Op category</source>
        <translation>Op category</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Role</translation>
    </message>
    <message>
        <source>Fusion group</source>
        <translation>Fusion group</translation>
    </message>
    <message>
        <source>Saved / recomputed</source>
        <translation>Saved / recomputed</translation>
    </message>
    <message>
        <source>Offload unit</source>
        <translation>Offload unit</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Size</translation>
    </message>
    <message>
        <source>Estimated time</source>
        <translation>Estimated time</translation>
    </message>
    <message>
        <source>Fold all</source>
        <translation>Fold all</translation>
    </message>
    <message>
        <source>Fold repeated layers and close big clusters again</source>
        <translation>Fold repeated layers and close big clusters again</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Fit</translation>
    </message>
    <message>
        <source>Fit the graph to the window</source>
        <translation>Fit the graph to the window</translation>
    </message>
    <message>
        <source>Colour by</source>
        <translation>Colour by</translation>
    </message>
    <message>
        <source>Laying out…</source>
        <translation>Laying out…</translation>
    </message>
    <message numerus="yes">
        <source>Laying out %n node(s)…</source>
        <translation>
            <numerusform>Laying out %n node…</numerusform>
            <numerusform>Laying out %n nodes…</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not lay out %1: %2</source>
        <translation>Could not lay out %1: %2</translation>
    </message>
    <message>
        <source>input</source>
        <translation>input</translation>
    </message>
    <message>
        <source>parameter</source>
        <translation>parameter</translation>
    </message>
    <message>
        <source>buffer</source>
        <translation>buffer</translation>
    </message>
    <message>
        <source>tangent</source>
        <translation>tangent</translation>
    </message>
    <message>
        <source>symbolic size</source>
        <translation>symbolic size</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>backward</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>forward</translation>
    </message>
    <message>
        <source>No plan for this graph yet.</source>
        <translation>No plan for this graph yet.</translation>
    </message>
    <message>
        <source>pointwise group (shades tell neighbours apart)</source>
        <translation>pointwise group (shades tell neighbours apart)</translation>
    </message>
    <message>
        <source>reduction group</source>
        <translation>reduction group</translation>
    </message>
    <message>
        <source>normalization group</source>
        <translation>normalization group</translation>
    </message>
    <message>
        <source>not fused</source>
        <translation>not fused</translation>
    </message>
    <message>
        <source>The plan on show has no recompute decision.</source>
        <translation>The plan on show has no recompute decision.</translation>
    </message>
    <message>
        <source>saved for the backward</source>
        <translation>saved for the backward</translation>
    </message>
    <message>
        <source>recomputed in the backward</source>
        <translation>recomputed in the backward</translation>
    </message>
    <message>
        <source>No layer units in the plan on show.</source>
        <translation>No layer units in the plan on show.</translation>
    </message>
    <message>
        <source>no unit</source>
        <translation>no unit</translation>
    </message>
    <message>
        <source>%1 (resident)</source>
        <translation>%1 (resident)</translation>
    </message>
    <message numerus="yes">
        <source>%n more unit(s) not listed.</source>
        <translation>
            <numerusform>%n more unit not listed.</numerusform>
            <numerusform>%n more units not listed.</numerusform>
        </translation>
    </message>
    <message>
        <source>no tensor</source>
        <translation>no tensor</translation>
    </message>
    <message>
        <source>no kernel</source>
        <translation>no kernel</translation>
    </message>
    <message>
        <source>Roofline estimate on %1.</source>
        <translation>Roofline estimate on %1.</translation>
    </message>
    <message>
        <source>no match</source>
        <translation>no match</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>No graph is laid out.</source>
        <translation>No graph is laid out.</translation>
    </message>
    <message>
        <source>Graph %1 drawn by Lathe Studio</source>
        <translation>Graph %1 drawn by Lathe Studio</translation>
    </message>
    <message>
        <source>Cannot write %1.</source>
        <translation>Cannot write %1.</translation>
    </message>
    <message>
        <source>Export writes .svg or .png files, not %1.</source>
        <translation>Export writes .svg or .png files, not %1.</translation>
    </message>
    <message>
        <source>The graph is too big for an image.</source>
        <translation>The graph is too big for an image.</translation>
    </message>
    <message>
        <source>Measured by %1 where it timed a node, else the roofline estimate on %2.</source>
        <translation>Measured by %1 where it timed a node, else the roofline estimate on %2.</translation>
    </message>
</context>
<context>
    <name>lathe::views::GuardDiffModel</name>
    <message>
        <source>added</source>
        <translation>added</translation>
    </message>
    <message>
        <source>removed</source>
        <translation>removed</translation>
    </message>
    <message>
        <source>changed</source>
        <translation>changed</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>Change</translation>
    </message>
    <message>
        <source>Guard</source>
        <translation>Guard</translation>
    </message>
    <message>
        <source>Guarded value</source>
        <translation>Guarded value</translation>
    </message>
    <message>
        <source>Before</source>
        <translation>Before</translation>
    </message>
    <message>
        <source>After</source>
        <translation>After</translation>
    </message>
</context>
<context>
    <name>lathe::views::GuardTreeModel</name>
    <message>
        <source>key: %1</source>
        <translation>key: %1</translation>
    </message>
    <message>
        <source>value: %1</source>
        <translation>value: %1</translation>
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
        <translation>Broken by a recompile: %1</translation>
    </message>
    <message>
        <source>Guard</source>
        <translation>Guard</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Guarded value</source>
        <translation>Guarded value</translation>
    </message>
    <message>
        <source>Python type</source>
        <translation>Python type</translation>
    </message>
    <message>
        <source>Accessed by</source>
        <translation>Accessed by</translation>
    </message>
    <message>
        <source>User code</source>
        <translation>User code</translation>
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
        <translation>Filter guards: type, value, code, user code…</translation>
    </message>
    <message>
        <source>Compile:</source>
        <translation>Compile:</translation>
    </message>
    <message>
        <source>Before:</source>
        <translation>Before:</translation>
    </message>
    <message>
        <source>After:</source>
        <translation>After:</translation>
    </message>
    <message>
        <source>Recompile reasons</source>
        <translation>Recompile reasons</translation>
    </message>
    <message>
        <source>Diff of two compiles</source>
        <translation>Diff of two compiles</translation>
    </message>
    <message>
        <source>No compile of this capture logged its guards.</source>
        <translation>No compile of this capture logged its guards.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 others</source>
        <translation>%1 others</translation>
    </message>
    <message numerus="yes">
        <source>%n guard(s): </source>
        <translation>
            <numerusform>%n guard: </numerusform>
            <numerusform>%n guards: </numerusform>
        </translation>
    </message>
    <message>
        <source>  ·  checked in %1 µs</source>
        <translation>  ·  checked in %1 µs</translation>
    </message>
    <message>
        <source>This compile logged no guards.</source>
        <translation>This compile logged no guards.</translation>
    </message>
    <message>
        <source>No later compile of this frame failed these guards.</source>
        <translation>No later compile of this frame failed these guards.</translation>
    </message>
    <message>
        <source>recompiled because this compile&apos;s guards failed:</source>
        <translation>recompiled because this compile&apos;s guards failed:</translation>
    </message>
    <message>
        <source>No guard of this tree matches the reason.</source>
        <translation>No guard of this tree matches the reason.</translation>
    </message>
    <message>
        <source>This compile exists because guards of</source>
        <translation>This compile exists because guards of</translation>
    </message>
    <message>
        <source>%1 added · %2 removed · %3 changed · %4 unchanged</source>
        <translation>%1 added · %2 removed · %3 changed · %4 unchanged</translation>
    </message>
    <message>
        <source>Guards are recorded in TORCH_TRACE logs and MagiCompiler dumps only.</source>
        <translation>Guards are recorded in TORCH_TRACE logs and MagiCompiler dumps only.</translation>
    </message>
</context>
<context>
    <name>lathe::views::KernelExporter</name>
    <message>
        <source>No CUDA compiler: exporting kernels needs a CUDA toolkit (nvcc), or libnvrtc and a host C++ compiler.

%1

%2</source>
        <translation>No CUDA compiler: exporting kernels needs a CUDA toolkit (nvcc), or libnvrtc and a host C++ compiler.

%1

%2</translation>
    </message>
    <message>
        <source>Looking for a CUDA compiler…</source>
        <translation>Looking for a CUDA compiler…</translation>
    </message>
    <message>
        <source>NVRTC %1 (%2)</source>
        <translation>NVRTC %1 (%2)</translation>
    </message>
    <message numerus="yes">
        <source>Generating kernels for %n fusion group(s)…</source>
        <translation>
            <numerusform>Generating kernels for %n fusion group…</numerusform>
            <numerusform>Generating kernels for %n fusion groups…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Compiling %n kernel(s) with %1…</source>
        <translation>
            <numerusform>Compiling %n kernel with %1…</numerusform>
            <numerusform>Compiling %n kernels with %1…</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>lathe::views::MagiTimelineModel</name>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>cache %1</source>
        <translation>cache %1</translation>
    </message>
    <message>
        <source>cache %1 (%2)</source>
        <translation>cache %1 (%2)</translation>
    </message>
    <message>
        <source>compile %1</source>
        <translation>compile %1</translation>
    </message>
    <message>
        <source>cache store %1</source>
        <translation>cache store %1</translation>
    </message>
    <message>
        <source>%1 pieces</source>
        <translation>%1 pieces</translation>
    </message>
    <message>
        <source>%1 scheduler nodes</source>
        <translation>%1 scheduler nodes</translation>
    </message>
    <message>
        <source>shape %1</source>
        <translation>shape %1</translation>
    </message>
    <message>
        <source>restart: %1</source>
        <translation>restart: %1</translation>
    </message>
    <message>
        <source>before</source>
        <translation>before</translation>
    </message>
    <message>
        <source>after</source>
        <translation>after</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>failed</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>skipped</translation>
    </message>
    <message>
        <source>mark</source>
        <translation>mark</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Time</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>Graph</translation>
    </message>
    <message>
        <source>Phase</source>
        <translation>Phase</translation>
    </message>
    <message>
        <source>Lifecycle</source>
        <translation>Lifecycle</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>Duration</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>Files</translation>
    </message>
</context>
<context>
    <name>lathe::views::MagiTimelineView</name>
    <message>
        <source>Time since the first event (s)</source>
        <translation>Time since the first event (s)</translation>
    </message>
    <message>
        <source>%1 · rank %2</source>
        <translation>%1 · rank %2</translation>
    </message>
    <message>
        <source>%1 has no timeline (no timeline_events/timeline.jsonl).</source>
        <translation>%1 has no timeline (no timeline_events/timeline.jsonl).</translation>
    </message>
    <message>
        <source>No MagiCompiler dump: open a magi_depyf folder to see its compile lifecycle.</source>
        <translation>No MagiCompiler dump: open a magi_depyf folder to see its compile lifecycle.</translation>
    </message>
    <message>
        <source>Lifecycle run</source>
        <translation>Lifecycle run</translation>
    </message>
    <message>
        <source>Failed run</source>
        <translation>Failed run</translation>
    </message>
    <message>
        <source>Mark (no before event)</source>
        <translation>Mark (no before event)</translation>
    </message>
    <message numerus="yes">
        <source>%1: %n event(s) over %2</source>
        <translation>
            <numerusform>%1: %n event over %2</numerusform>
            <numerusform>%1: %n events over %2</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, %n failed run(s)</source>
        <translation>
            <numerusform>, %n failed run</numerusform>
            <numerusform>, %n failed runs</numerusform>
        </translation>
    </message>
    <message>
        <source>; click a span for its event and files.</source>
        <translation>; click a span for its event and files.</translation>
    </message>
    <message>
        <source>Selected</source>
        <translation>Selected</translation>
    </message>
    <message>
        <source>MagiCompiler wrote no file for this event.</source>
        <translation>MagiCompiler wrote no file for this event.</translation>
    </message>
    <message>
        <source>Could not read %1: %2</source>
        <translation>Could not read %1: %2</translation>
    </message>
    <message>
        <source>at %1</source>
        <translation>at %1</translation>
    </message>
    <message>
        <source>took %1</source>
        <translation>took %1</translation>
    </message>
</context>
<context>
    <name>lathe::views::MemoryCategory</name>
    <message>
        <source>weights</source>
        <translation>weights</translation>
    </message>
    <message>
        <source>inputs</source>
        <translation>inputs</translation>
    </message>
    <message>
        <source>saved</source>
        <translation>saved</translation>
    </message>
    <message>
        <source>recomputed</source>
        <translation>recomputed</translation>
    </message>
    <message>
        <source>temporaries</source>
        <translation>temporaries</translation>
    </message>
    <message>
        <source>gradients</source>
        <translation>gradients</translation>
    </message>
    <message>
        <source>outputs</source>
        <translation>outputs</translation>
    </message>
    <message>
        <source>prefetched</source>
        <translation>prefetched</translation>
    </message>
</context>
<context>
    <name>lathe::views::MemoryTimelineView</name>
    <message>
        <source>Pin as baseline</source>
        <translation>Pin as baseline</translation>
    </message>
    <message>
        <source>Clear baseline</source>
        <translation>Clear baseline</translation>
    </message>
    <message>
        <source>Load memory snapshot…</source>
        <translation>Load memory snapshot…</translation>
    </message>
    <message>
        <source>Hide snapshot</source>
        <translation>Hide snapshot</translation>
    </message>
    <message>
        <source>Keep this plan&apos;s total on the plot as an outline, to compare the next plans with it.</source>
        <translation>Keep this plan&apos;s total on the plot as an outline, to compare the next plans with it.</translation>
    </message>
    <message>
        <source>Draw a CUDA memory snapshot&apos;s allocated bytes (torch.cuda.memory._dump_snapshot) over the plan, to compare the prediction with a measured run.</source>
        <translation>Draw a CUDA memory snapshot&apos;s allocated bytes (torch.cuda.memory._dump_snapshot) over the plan, to compare the prediction with a measured run.</translation>
    </message>
    <message>
        <source>Execution</source>
        <translation>Execution</translation>
    </message>
    <message>
        <source>baseline: %1 (peak %2)</source>
        <translation>baseline: %1 (peak %2)</translation>
    </message>
    <message>
        <source>budget %1</source>
        <translation>budget %1</translation>
    </message>
    <message>
        <source>Load a CUDA memory snapshot</source>
        <translation>Load a CUDA memory snapshot</translation>
    </message>
    <message>
        <source>CUDA memory snapshots (*.pickle);;All files (*)</source>
        <translation>CUDA memory snapshots (*.pickle);;All files (*)</translation>
    </message>
    <message>
        <source>snapshot %1, allocated</source>
        <translation>snapshot %1, allocated</translation>
    </message>
    <message>
        <source>budget %1 cannot be met</source>
        <translation>budget %1 cannot be met</translation>
    </message>
    <message>
        <source>← forward</source>
        <translation>← forward</translation>
    </message>
    <message>
        <source>backward →</source>
        <translation>backward →</translation>
    </message>
    <message>
        <source>peak %1 at %2</source>
        <translation>peak %1 at %2</translation>
    </message>
    <message>
        <source>Live memory (%1)</source>
        <translation>Live memory (%1)</translation>
    </message>
    <message numerus="yes">
        <source>measured (%1): %2 median, %n step(s)</source>
        <translation>
            <numerusform>measured (%1): %2 median, %n step</numerusform>
            <numerusform>measured (%1): %2 median, %n steps</numerusform>
        </translation>
    </message>
    <message>
        <source>measured peak %1 (%2 above the %3 held before)</source>
        <translation>measured peak %1 (%2 above the %3 held before)</translation>
    </message>
    <message>
        <source>The run measured no peak: %1 keeps no allocator statistics.</source>
        <translation>The run measured no peak: %1 keeps no allocator statistics.</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>Loading %1…</translation>
    </message>
    <message>
        <source>Loading the snapshot %1 cancelled</source>
        <translation>Loading the snapshot %1 cancelled</translation>
    </message>
    <message>
        <source>Could not load the snapshot %1: %2</source>
        <translation>Could not load the snapshot %1: %2</translation>
    </message>
    <message>
        <source>The snapshot %1 has no allocation trace: record one with torch.cuda.memory._record_memory_history() before the steps.</source>
        <translation>The snapshot %1 has no allocation trace: record one with torch.cuda.memory._record_memory_history() before the steps.</translation>
    </message>
    <message>
        <source>%1 memory %2</source>
        <translation>%1 memory %2</translation>
    </message>
    <message>
        <source>%1 memory %2: the step does not fit</source>
        <translation>%1 memory %2: the step does not fit</translation>
    </message>
    <message>
        <source>%1 · execution %2 (%3)</source>
        <translation>%1 · execution %2 (%3)</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>backward</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>forward</translation>
    </message>
    <message>
        <source>held %1</source>
        <translation>held %1</translation>
    </message>
    <message>
        <source>  %1 %2</source>
        <translation>  %1 %2</translation>
    </message>
    <message>
        <source>starts at %1</source>
        <translation>starts at %1</translation>
    </message>
    <message>
        <source>iteration %1 of the %2 it recorded (events %3–%4; iterations are found where memory comes back down between steps), the one with its peak,</source>
        <translation>iteration %1 of the %2 it recorded (events %3–%4; iterations are found where memory comes back down between steps), the one with its peak,</translation>
    </message>
    <message>
        <source>its whole trace (%1 events: one iteration),</source>
        <translation>its whole trace (%1 events: one iteration),</translation>
    </message>
    <message>
        <source>Measured peak %1, planned %2 (%3).</source>
        <translation>Measured peak %1, planned %2 (%3).</translation>
    </message>
    <message>
        <source>Snapshot %1 (device %2): %3 spread evenly over this plan&apos;s %4 executions, so the curves share the step&apos;s ends but not a clock. %5</source>
        <translation>Snapshot %1 (device %2): %3 spread evenly over this plan&apos;s %4 executions, so the curves share the step&apos;s ends but not a clock. %5</translation>
    </message>
    <message>
        <source>%1: iteration %2 of %3 over the step. %4</source>
        <translation>%1: iteration %2 of %3 over the step. %4</translation>
    </message>
    <message>
        <source>%1 over the step. %2</source>
        <translation>%1 over the step. %2</translation>
    </message>
    <message>
        <source>largest values:</source>
        <translation>largest values:</translation>
    </message>
    <message>
        <source>  %1 %2 (%3)</source>
        <translation>  %1 %2 (%3)</translation>
    </message>
    <message>
        <source>, dead: kept for %1 by buffer reuse</source>
        <translation>, dead: kept for %1 by buffer reuse</translation>
    </message>
</context>
<context>
    <name>lathe::views::NodeInspector</name>
    <message>
        <source>yes</source>
        <translation>yes</translation>
    </message>
    <message>
        <source>no</source>
        <translation>no</translation>
    </message>
    <message>
        <source>Select a node to see its details.</source>
        <translation>Select a node to see its details.</translation>
    </message>
    <message>
        <source>Kernel</source>
        <translation>Kernel</translation>
    </message>
    <message>
        <source>none (no device work)</source>
        <translation>none (no device work)</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Time</translation>
    </message>
    <message>
        <source>Bound by</source>
        <translation>Bound by</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>compute</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>memory</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>Bytes moved</source>
        <translation>Bytes moved</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>Cost</translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>%n more</numerusform>
            <numerusform>%n more</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 as %2</source>
        <translation>%1 as %2</translation>
    </message>
    <message>
        <source>Also in:</source>
        <translation>Also in:</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>Op</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>Target</translation>
    </message>
    <message>
        <source>Role</source>
        <translation>Role</translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>Comment</translation>
    </message>
    <message>
        <source>Synthetic</source>
        <translation>Synthetic</translation>
    </message>
    <message>
        <source>added by the loader</source>
        <translation>added by the loader</translation>
    </message>
    <message>
        <source>Node</source>
        <translation>Node</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Value</translation>
    </message>
    <message>
        <source>Strides</source>
        <translation>Strides</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>Device</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>Category</translation>
    </message>
    <message>
        <source>Table entry</source>
        <translation>Table entry</translation>
    </message>
    <message>
        <source>Fusible</source>
        <translation>Fusible</translation>
    </message>
    <message>
        <source>Compute sensitive</source>
        <translation>Compute sensitive</translation>
    </message>
    <message>
        <source>Subgraph boundary</source>
        <translation>Subgraph boundary</translation>
    </message>
    <message>
        <source>Operator</source>
        <translation>Operator</translation>
    </message>
    <message>
        <source>Estimated cost on %1</source>
        <translation>Estimated cost on %1</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>Arguments</translation>
    </message>
    <message>
        <source>Users (%1)</source>
        <translation>Users (%1)</translation>
    </message>
    <message>
        <source>Module</source>
        <translation>Module</translation>
    </message>
    <message>
        <source> in %1</source>
        <translation> in %1</translation>
    </message>
    <message>
        <source>File</source>
        <translation>File</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>Annotation</source>
        <translation>Annotation</translation>
    </message>
    <message>
        <source>Provenance</source>
        <translation>Provenance</translation>
    </message>
    <message>
        <source>%1 (its share of a fused kernel; %2 alone)</source>
        <translation>%1 (its share of a fused kernel; %2 alone)</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>not timed by the profile&apos;s run</source>
        <translation>not timed by the profile&apos;s run</translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation>Estimated</translation>
    </message>
    <message>
        <source>Model error</source>
        <translation>Model error</translation>
    </message>
    <message>
        <source>Measured by</source>
        <translation>Measured by</translation>
    </message>
    <message>
        <source>Measured beside estimated</source>
        <translation>Measured beside estimated</translation>
    </message>
</context>
<context>
    <name>lathe::views::OffloadRunView</name>
    <message>
        <source>No weight-offload run: open a run folder of lathe.compile(..., offload=...).</source>
        <translation>No weight-offload run: open a run folder of lathe.compile(..., offload=...).</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>measured</translation>
    </message>
    <message>
        <source>simulated</source>
        <translation>simulated</translation>
    </message>
    <message>
        <source>%1 compute</source>
        <translation>%1 compute</translation>
    </message>
    <message>
        <source>%1 H2D</source>
        <translation>%1 H2D</translation>
    </message>
    <message>
        <source>measured D2H</source>
        <translation>measured D2H</translation>
    </message>
    <message>
        <source>simulated D2H (not modelled)</source>
        <translation>simulated D2H (not modelled)</translation>
    </message>
    <message>
        <source>Weight offload, one %1 step under %2 on %3: measured %4, simulated %5</source>
        <translation>Weight offload, one %1 step under %2 on %3: measured %4, simulated %5</translation>
    </message>
    <message>
        <source> (measured/simulated %1)</source>
        <translation> (measured/simulated %1)</translation>
    </message>
    <message>
        <source>
compute idle %1 measured, %2 simulated · %3 of %4 units resident · H2D %5/s</source>
        <translation>
compute idle %1 measured, %2 simulated · %3 of %4 units resident · H2D %5/s</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>Measured</translation>
    </message>
    <message>
        <source>Simulated</source>
        <translation>Simulated</translation>
    </message>
    <message>
        <source>%1: compute idle before %2 (waiting for its weights, or code outside the layer units)
%3</source>
        <translation>%1: compute idle before %2 (waiting for its weights, or code outside the layer units)
%3</translation>
    </message>
    <message>
        <source>%1 compute: %2
%3</source>
        <translation>%1 compute: %2
%3</translation>
    </message>
    <message>
        <source>%1 weight copy: %2, %3
%4%5</source>
        <translation>%1 weight copy: %2, %3
%4%5</translation>
    </message>
    <message>
        <source>
starts in the previous step</source>
        <translation>
starts in the previous step</translation>
    </message>
    <message>
        <source>%1 gradient copy: a tensor of %2
%3</source>
        <translation>%1 gradient copy: a tensor of %2
%3</translation>
    </message>
    <message>
        <source>training</source>
        <translation>training</translation>
    </message>
    <message>
        <source>inference</source>
        <translation>inference</translation>
    </message>
    <message>
        <source> backward</source>
        <translation> backward</translation>
    </message>
</context>
<context>
    <name>lathe::views::OpCategory</name>
    <message>
        <source>unknown</source>
        <translation>unknown</translation>
    </message>
    <message>
        <source>matmul</source>
        <translation>matmul</translation>
    </message>
    <message>
        <source>attention</source>
        <translation>attention</translation>
    </message>
    <message>
        <source>convolution</source>
        <translation>convolution</translation>
    </message>
    <message>
        <source>pointwise</source>
        <translation>pointwise</translation>
    </message>
    <message>
        <source>reduction</source>
        <translation>reduction</translation>
    </message>
    <message>
        <source>normalization</source>
        <translation>normalization</translation>
    </message>
    <message>
        <source>data_movement</source>
        <translation>data_movement</translation>
    </message>
    <message>
        <source>view</source>
        <translation>view</translation>
    </message>
    <message>
        <source>creation</source>
        <translation>creation</translation>
    </message>
    <message>
        <source>random</source>
        <translation>random</translation>
    </message>
    <message>
        <source>collective</source>
        <translation>collective</translation>
    </message>
    <message>
        <source>getitem</source>
        <translation>getitem</translation>
    </message>
    <message>
        <source>host</source>
        <translation>host</translation>
    </message>
    <message>
        <source>higher_order</source>
        <translation>higher_order</translation>
    </message>
    <message>
        <source>custom</source>
        <translation>custom</translation>
    </message>
</context>
<context>
    <name>lathe::views::ParetoView</name>
    <message>
        <source>Recompute time (ms)</source>
        <translation>Recompute time (ms)</translation>
    </message>
    <message>
        <source>Each point is a saved set no other beats on both peak and recompute time. Click one to plan with its peak as the budget.</source>
        <translation>Each point is a saved set no other beats on both peak and recompute time. Click one to plan with its peak as the budget.</translation>
    </message>
    <message>
        <source>No graph selected.</source>
        <translation>No graph selected.</translation>
    </message>
    <message>
        <source>The recompute frontier needs a joint (training) graph.</source>
        <translation>The recompute frontier needs a joint (training) graph.</translation>
    </message>
    <message>
        <source>Computing the recompute frontier…</source>
        <translation>Computing the recompute frontier…</translation>
    </message>
    <message>
        <source>The recompute frontier is computed when the budget panel or this view needs it.</source>
        <translation>The recompute frontier is computed when the budget panel or this view needs it.</translation>
    </message>
    <message>
        <source>frontier (budget policy)</source>
        <translation>frontier (budget policy)</translation>
    </message>
    <message>
        <source>this plan: recompute(%1)</source>
        <translation>this plan: recompute(%1)</translation>
    </message>
    <message numerus="yes">
        <source>Recompute frontier on %1
%n point(s), peaks %2 to %3</source>
        <translation>
            <numerusform>Recompute frontier on %1
%n point, peaks %2 to %3</numerusform>
            <numerusform>Recompute frontier on %1
%n points, peaks %2 to %3</numerusform>
        </translation>
    </message>
    <message>
        <source>Peak memory of the step (%1)</source>
        <translation>Peak memory of the step (%1)</translation>
    </message>
</context>
<context>
    <name>lathe::views::PipelinePanel</name>
    <message>
        <source>Run</source>
        <translation>Run</translation>
    </message>
    <message>
        <source>◀ Back</source>
        <translation>◀ Back</translation>
    </message>
    <message>
        <source>Forward ▶</source>
        <translation>Forward ▶</translation>
    </message>
    <message>
        <source>Statistic</source>
        <translation>Statistic</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Value</translation>
    </message>
    <message>
        <source>The selected step&apos;s changes</source>
        <translation>The selected step&apos;s changes</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>Running…</translation>
    </message>
    <message>
        <source>Pipeline failed: %1</source>
        <translation>Pipeline failed: %1</translation>
    </message>
    <message>
        <source>0. initial</source>
        <translation>0. initial</translation>
    </message>
    <message>
        <source>%1. %2</source>
        <translation>%1. %2</translation>
    </message>
    <message numerus="yes">
        <source>%n step(s) on %1 in %2</source>
        <translation>
            <numerusform>%n step on %1 in %2</numerusform>
            <numerusform>%n steps on %1 in %2</numerusform>
        </translation>
    </message>
    <message>
        <source>planned peak</source>
        <translation>planned peak</translation>
    </message>
    <message>
        <source>planned step time</source>
        <translation>planned step time</translation>
    </message>
    <message>
        <source>pass time</source>
        <translation>pass time</translation>
    </message>
    <message>
        <source>(no change)</source>
        <translation>(no change)</translation>
    </message>
    <message>
        <source>(the graph before any pass)</source>
        <translation>(the graph before any pass)</translation>
    </message>
</context>
<context>
    <name>lathe::views::PlanFile</name>
    <message>
        <source>pieces</source>
        <translation>pieces</translation>
    </message>
    <message>
        <source>layer units</source>
        <translation>layer units</translation>
    </message>
    <message>
        <source>fusion groups</source>
        <translation>fusion groups</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>recompute</translation>
    </message>
    <message>
        <source>offload</source>
        <translation>offload</translation>
    </message>
</context>
<context>
    <name>lathe::views::PlanSession</name>
    <message>
        <source>No graph to plan</source>
        <translation>No graph to plan</translation>
    </message>
    <message>
        <source>%1 was not applied: another graph was selected while it was read</source>
        <translation>%1 was not applied: another graph was selected while it was read</translation>
    </message>
    <message>
        <source>No graph to price: select one first</source>
        <translation>No graph to price: select one first</translation>
    </message>
    <message>
        <source>Loading the profile was cancelled</source>
        <translation>Loading the profile was cancelled</translation>
    </message>
</context>
<context>
    <name>lathe::views::SavedTensorLedgerModel</name>
    <message>
        <source>Saved tensor</source>
        <translation>Saved tensor</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>Value</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <source>Saved at</source>
        <translation>Saved at</translation>
    </message>
    <message>
        <source>Last backward use</source>
        <translation>Last backward use</translation>
    </message>
    <message>
        <source>Held for</source>
        <translation>Held for</translation>
    </message>
    <message>
        <source>Bytes × time</source>
        <translation>Bytes × time</translation>
    </message>
    <message>
        <source>Why kept</source>
        <translation>Why kept</translation>
    </message>
    <message numerus="yes">
        <source>%n execution(s) from saved to last read</source>
        <translation>
            <numerusform>%n execution from saved to last read</numerusform>
            <numerusform>%n executions from saved to last read</numerusform>
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
        <translation>%1:%2 in %3</translation>
    </message>
    <message>
        <source>before recording</source>
        <translation>before recording</translation>
    </message>
    <message>
        <source>event %1</source>
        <translation>event %1</translation>
    </message>
    <message>
        <source>%1 (event %2)</source>
        <translation>%1 (event %2)</translation>
    </message>
    <message>
        <source>No call stack was recorded for this allocation.</source>
        <translation>No call stack was recorded for this allocation.</translation>
    </message>
    <message>
        <source>Python frames, innermost first:</source>
        <translation>Python frames, innermost first:</translation>
    </message>
    <message>
        <source>  (none recorded)</source>
        <translation>  (none recorded)</translation>
    </message>
    <message>
        <source>Native frames:</source>
        <translation>Native frames:</translation>
    </message>
    <message>
        <source>— (no user frame)</source>
        <translation>— (no user frame)</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Size</translation>
    </message>
    <message>
        <source>Allocated at</source>
        <translation>Allocated at</translation>
    </message>
    <message>
        <source>User frame</source>
        <translation>User frame</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Address</translation>
    </message>
</context>
<context>
    <name>lathe::views::SnapshotView</name>
    <message>
        <source>Go to the peak</source>
        <translation>Go to the peak</translation>
    </message>
    <message>
        <source>The device whose trace is shown</source>
        <translation>The device whose trace is shown</translation>
    </message>
    <message>
        <source>Select an allocation to see where it was made (▶ marks the user&apos;s frame).</source>
        <translation>Select an allocation to see where it was made (▶ marks the user&apos;s frame).</translation>
    </message>
    <message numerus="yes">
        <source>cuda:%1 · %n event(s)</source>
        <translation>
            <numerusform>cuda:%1 · %n event</numerusform>
            <numerusform>cuda:%1 · %n events</numerusform>
        </translation>
    </message>
    <message>
        <source>Open a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) to see its memory over time.</source>
        <translation>Open a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) to see its memory over time.</translation>
    </message>
    <message numerus="yes">
        <source>&lt;b&gt;%1&lt;/b&gt; · cuda:%2 · %n trace event(s)</source>
        <translation>
            <numerusform>&lt;b&gt;%1&lt;/b&gt; · cuda:%2 · %n trace event</numerusform>
            <numerusform>&lt;b&gt;%1&lt;/b&gt; · cuda:%2 · %n trace events</numerusform>
        </translation>
    </message>
    <message>
        <source> over %1</source>
        <translation> over %1</translation>
    </message>
    <message>
        <source>&lt;br&gt;Peak allocated &lt;b&gt;%1&lt;/b&gt;</source>
        <translation>&lt;br&gt;Peak allocated &lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <source> at %1</source>
        <translation> at %1</translation>
    </message>
    <message>
        <source> at event %1</source>
        <translation> at event %1</translation>
    </message>
    <message numerus="yes">
        <source> (%n allocation(s) live)</source>
        <translation>
            <numerusform> (%n allocation live)</numerusform>
            <numerusform> (%n allocations live)</numerusform>
        </translation>
    </message>
    <message>
        <source> · peak reserved %1 · %2 allocated before recording, %3 at the end</source>
        <translation> · peak reserved %1 · %2 allocated before recording, %3 at the end</translation>
    </message>
    <message numerus="yes">
        <source> · &lt;b&gt;%n out-of-memory event(s)&lt;/b&gt;</source>
        <translation>
            <numerusform> · &lt;b&gt;%n out-of-memory event&lt;/b&gt;</numerusform>
            <numerusform> · &lt;b&gt;%n out-of-memory events&lt;/b&gt;</numerusform>
        </translation>
    </message>
    <message>
        <source> · the reserved bytes do not add up (a damaged or partial trace)</source>
        <translation> · the reserved bytes do not add up (a damaged or partial trace)</translation>
    </message>
    <message>
        <source>reserved (segments)</source>
        <translation>reserved (segments)</translation>
    </message>
    <message>
        <source>allocated</source>
        <translation>allocated</translation>
    </message>
    <message>
        <source>Time since the first event (s)</source>
        <translation>Time since the first event (s)</translation>
    </message>
    <message>
        <source>Trace event</source>
        <translation>Trace event</translation>
    </message>
    <message>
        <source>Memory (%1)</source>
        <translation>Memory (%1)</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>peak %1</translation>
    </message>
    <message>
        <source>before the first event</source>
        <translation>before the first event</translation>
    </message>
    <message>
        <source>at %1 (after event %2, %3)</source>
        <translation>at %1 (after event %2, %3)</translation>
    </message>
    <message>
        <source>after event %1 (%2)</source>
        <translation>after event %1 (%2)</translation>
    </message>
    <message numerus="yes">
        <source>Allocator state %1: &lt;b&gt;%2&lt;/b&gt; in %n live allocation(s)</source>
        <translation>
            <numerusform>Allocator state %1: &lt;b&gt;%2&lt;/b&gt; in %n live allocation</numerusform>
            <numerusform>Allocator state %1: &lt;b&gt;%2&lt;/b&gt; in %n live allocations</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>, the %n largest listed</source>
        <translation>
            <numerusform>, the %n largest listed</numerusform>
            <numerusform>, the %n largest listed</numerusform>
        </translation>
    </message>
    <message>
        <source> — the peak</source>
        <translation> — the peak</translation>
    </message>
    <message>
        <source>. Click the plot to see another moment.</source>
        <translation>. Click the plot to see another moment.</translation>
    </message>
    <message>
        <source>event %1</source>
        <translation>event %1</translation>
    </message>
    <message>
        <source>%1
allocated %2
reserved %3</source>
        <translation>%1
allocated %2
reserved %3</translation>
    </message>
</context>
<context>
    <name>lathe::views::StageLinks</name>
    <message>
        <source>Dynamo graph</source>
        <translation>Dynamo graph</translation>
    </message>
    <message>
        <source>pre-grad graph (before passes)</source>
        <translation>pre-grad graph (before passes)</translation>
    </message>
    <message>
        <source>pre-grad graph</source>
        <translation>pre-grad graph</translation>
    </message>
    <message>
        <source>joint graph</source>
        <translation>joint graph</translation>
    </message>
    <message>
        <source>joint-pass graph (before passes)</source>
        <translation>joint-pass graph (before passes)</translation>
    </message>
    <message>
        <source>joint-pass graph</source>
        <translation>joint-pass graph</translation>
    </message>
    <message>
        <source>forward graph</source>
        <translation>forward graph</translation>
    </message>
    <message>
        <source>backward graph</source>
        <translation>backward graph</translation>
    </message>
    <message>
        <source>inference graph</source>
        <translation>inference graph</translation>
    </message>
    <message>
        <source>post-grad graph (before passes)</source>
        <translation>post-grad graph (before passes)</translation>
    </message>
    <message>
        <source>post-grad graph</source>
        <translation>post-grad graph</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>cannot write %1</source>
        <translation>cannot write %1</translation>
    </message>
    <message>
        <source>Workbench for PyTorch compiler artifacts: TORCH_TRACE logs (files or folders of ranks), torch.export .pt2 archives, CUDA memory snapshots.</source>
        <translation>Workbench for PyTorch compiler artifacts: TORCH_TRACE logs (files or folders of ranks), torch.export .pt2 archives, CUDA memory snapshots.</translation>
    </message>
    <message>
        <source>Render the window headless at %1x%2 to &lt;png&gt; and exit.</source>
        <translation>Render the window headless at %1x%2 to &lt;png&gt; and exit.</translation>
    </message>
    <message>
        <source>png</source>
        <translation>png</translation>
    </message>
    <message>
        <source>View to show in the screenshot: %1.</source>
        <translation>View to show in the screenshot: %1.</translation>
    </message>
    <message>
        <source>name</source>
        <translation>name</translation>
    </message>
    <message>
        <source>Interface language for this run: %1 (default: the one chosen in the Language menu, else the system&apos;s).</source>
        <translation>Interface language for this run: %1 (default: the one chosen in the Language menu, else the system&apos;s).</translation>
    </message>
    <message>
        <source>code</source>
        <translation>code</translation>
    </message>
    <message>
        <source>unknown language &apos;%1&apos;; available: %2</source>
        <translation>unknown language &apos;%1&apos;; available: %2</translation>
    </message>
    <message>
        <source>expected at most one path, got %1</source>
        <translation>expected at most one path, got %1</translation>
    </message>
    <message>
        <source>view &apos;%1&apos; is not available yet; available: %2</source>
        <translation>view &apos;%1&apos; is not available yet; available: %2</translation>
    </message>
    <message>
        <source>no path given and the bundled example is missing</source>
        <translation>no path given and the bundled example is missing</translation>
    </message>
    <message>
        <source>could not open %1: %2</source>
        <translation>could not open %1: %2</translation>
    </message>
    <message>
        <source>could not show the plan %1: %2</source>
        <translation>could not show the plan %1: %2</translation>
    </message>
    <message>
        <source>Artifact or plan bundle (.json) to open (default: the bundled example).</source>
        <translation>Artifact or plan bundle (.json) to open (default: the bundled example).</translation>
    </message>
    <message>
        <source>could not apply the profile %1: %2</source>
        <translation>could not apply the profile %1: %2</translation>
    </message>
    <message>
        <source>Price the plan with a lathe.profile/1 file (lathe measure -o), as File › Load Profile… does.</source>
        <translation>Price the plan with a lathe.profile/1 file (lathe measure -o), as File › Load Profile… does.</translation>
    </message>
    <message>
        <source>file</source>
        <translation>file</translation>
    </message>
    <message>
        <source>could not compare with %1: %2</source>
        <translation>could not compare with %1: %2</translation>
    </message>
    <message>
        <source>Compare the graph on show with a capture or plan bundle (.json), as File › Compare With… does, and show the Compare tab.</source>
        <translation>Compare the graph on show with a capture or plan bundle (.json), as File › Compare With… does, and show the Compare tab.</translation>
    </message>
    <message>
        <source>path</source>
        <translation>path</translation>
    </message>
</context>
</TS>
