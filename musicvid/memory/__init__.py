"""The memory plan: before any work, what each stage of a render holds on the GPU and how it is made to fit
(`plan`; a stage's ways of running and the first that fits, `ladder`; the pictures stage, `pictures`; the transitions
stage, `transitions`; what a pass holds beside its weights, counted on the meta device, `activations`). `musicvid plan`
prints it."""
