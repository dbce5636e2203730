package main

// Porcupine over every log of a round, and, for a log that is not linearizable, which
// operation no order could place and why (from the longest order porcupine found).

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verbose: say how long each log took (-v).
var Verbose bool

func checkLinearizable(h *History, must map[string][]string, timeout time.Duration) (ok, inconclusive int, out []Anomaly) {
	parts := partitions(h, must)
	names := make([]string, 0, len(parts))
	for name := range parts {
		names = append(names, name)
	}
	sort.Strings(names)
	model := logModel.ToModel()
	for _, name := range names {
		ops := parts[name]
		start := time.Now()
		result, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
		if Verbose {
			fmt.Fprintf(os.Stderr, "checker: %s: %d operations, %s in %s\n", name, len(ops), result, time.Since(start).Round(time.Millisecond))
		}
		switch result {
		case porcupine.Ok:
			ok++
		case porcupine.Unknown:
			inconclusive++
		default:
			out = append(out, Anomaly{Kind: "nonlinearizable", Where: name, Detail: explain(ops, info)})
		}
	}
	return ok, inconclusive, out
}

// explain replays the longest partial linearization and names the first operation (by return
// time) that cannot follow it, with the model's reason.
func explain(ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	partials := info.PartialLinearizationsOperations()
	var longest []porcupine.Operation
	for _, part := range partials {
		for _, seq := range part {
			if len(seq) > len(longest) {
				longest = seq
			}
		}
	}
	states := []*logState{newLogState()}
	placed := map[*logInput]bool{}
	for _, op := range longest {
		in := op.Input.(*logInput)
		placed[in] = true
		var next []*logState
		for _, s := range states {
			if in.kind == inHide {
				next = append(next, s, applyInput(s, in))
			} else if stepFailure(s, in) == "" {
				next = append(next, applyInput(s, in))
			}
		}
		if len(next) > 0 {
			states = next
		}
	}
	rest := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		if !placed[op.Input.(*logInput)] {
			rest = append(rest, op)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Return < rest[j].Return })
	for _, op := range rest {
		in := op.Input.(*logInput)
		if in.kind == inHide {
			continue
		}
		if why := stepFailure(states[0], in); why != "" {
			return fmt.Sprintf("%s — after %d of %d operations, %s", why, len(longest), len(ops), in.desc)
		}
	}
	return fmt.Sprintf("no order of the %d operations fits the model (longest found: %d)", len(ops), len(longest))
}
