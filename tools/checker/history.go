package main

// The history a campaign round writes: one JSON object per line (tools/campaign/src/history.ts
// writes it). Times are milliseconds on the driver's monotonic clock, with fractions.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Conv names a conversation from the inbox owner's point of view.
type Conv struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (c Conv) Key() string { return c.Type + ":" + c.ID }

// RecallRef and EditRef are the message an entry names.
type RecallRef struct {
	Appinfo string `json:"appinfo"`
	From    string `json:"from,omitempty"`
}

type EditRef struct {
	Appinfo  string  `json:"appinfo"`
	EditedAt float64 `json:"editedAt"`
}

// Entry is an inbox or group-stream entry as the wire carries it.
type Entry struct {
	Seq      int64      `json:"seq"`
	Gseq     int64      `json:"gseq,omitempty"`
	Kind     string     `json:"kind"`
	Appinfo  string     `json:"appinfo"`
	Conv     Conv       `json:"conv"`
	From     string     `json:"from"`
	SendTime float64    `json:"sendTime"`
	Type     string     `json:"type,omitempty"`
	ReferSeq int64      `json:"referSeq,omitempty"`
	Seqs     []int64    `json:"seqs,omitempty"`
	UpToSeq  *int64     `json:"upToSeq,omitempty"`
	Mentions []string   `json:"mentions,omitempty"`
	Recall   *RecallRef `json:"recall,omitempty"`
	Edit     *EditRef   `json:"edit,omitempty"`
}

// messageKey is core's messageKey: a client appinfo is keyed by its sender.
func messageKey(from, appinfo string) string {
	if strings.Contains(appinfo, ":") {
		return appinfo
	}
	return from + "/" + appinfo
}

// DedupKey is the key an inbox or a stream de-duplicates the entry under (I3).
func (e *Entry) DedupKey() string { return messageKey(e.From, e.Appinfo) }

// IsActivity: a message or a group notice other than a tier switch.
func (e *Entry) IsActivity() bool {
	return e.Kind == "msg" || (e.Kind == "group" && e.Type != "group.tier")
}

// Group is a group of the round, as the driver created it.
type Group struct {
	ID      string   `json:"id"`
	Tier    string   `json:"tier"`
	Admin   string   `json:"admin"`
	Members []string `json:"members"`
	// Churn: members are added and removed during the round (no I4 promise for members in flux).
	Churn bool `json:"churn,omitempty"`
}

// Record is one line of the history.
type Record struct {
	T string `json:"t"`
	// meta
	Round          int            `json:"round,omitempty"`
	Seed           string         `json:"seed,omitempty"`
	Mode           string         `json:"mode,omitempty"`
	Tenant         string         `json:"tenant,omitempty"`
	Users          []string       `json:"users,omitempty"`
	Offline        []string       `json:"offline,omitempty"`
	Groups         []Group        `json:"groups,omitempty"`
	NotifyWindowMs float64        `json:"notifyWindowMs,omitempty"`
	Hooks          bool           `json:"hooks,omitempty"`
	UserShards     map[string]int `json:"userShards,omitempty"`
	// op / push / final
	Dev  string          `json:"dev,omitempty"`
	User string          `json:"user,omitempty"`
	Sock int             `json:"sock,omitempty"`
	Op   string          `json:"op,omitempty"`
	Call float64         `json:"call,omitempty"`
	Ret  *float64        `json:"ret,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	Res  json.RawMessage `json:"res,omitempty"`
	At   float64         `json:"at,omitempty"`
	// push: the frame; final: entries; finalStream: messages
	Frame    json.RawMessage `json:"frame,omitempty"`
	Entries  []Entry         `json:"entries,omitempty"`
	Group    string          `json:"group,omitempty"`
	Messages []Entry         `json:"messages,omitempty"`
	// hook
	Kind   string          `json:"kind,omitempty"`
	Status int             `json:"status,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	Signed bool            `json:"signed,omitempty"`
	// fault
	Target string  `json:"target,omitempty"`
	End    float64 `json:"end,omitempty"`
	// Stopped: when a restarted service was down (what it acknowledged before was the old instance's).
	Stopped float64 `json:"stopped,omitempty"`
	Shards  []int   `json:"shards,omitempty"`
	Detail  string  `json:"detail,omitempty"`
	// deadletters
	Count int `json:"count,omitempty"`
}

// History is a parsed round.
type History struct {
	Meta        Record
	Ops         []Record
	Pushes      []Record
	Hooks       []Record
	Faults      []Record
	Finals      map[string][]Entry // user → raw inbox at the end
	FinalCalls  map[string][2]float64
	Streams     map[string][]Entry // group → stream at the end
	StreamCalls map[string][2]float64
	DeadLetters int
	End         float64 // the latest time in the history
}

// ParseHistory reads JSON lines; an unreadable line is an error (a truncated history must not pass).
func ParseHistory(r io.Reader) (*History, error) {
	h := &History{Finals: map[string][]Entry{}, FinalCalls: map[string][2]float64{}, Streams: map[string][]Entry{}, StreamCalls: map[string][2]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	sawMeta := false
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		for _, t := range []float64{rec.Call, rec.At, rec.End} {
			if t > h.End {
				h.End = t
			}
		}
		if rec.Ret != nil && *rec.Ret > h.End {
			h.End = *rec.Ret
		}
		switch rec.T {
		case "meta":
			h.Meta = rec
			sawMeta = true
		case "op":
			h.Ops = append(h.Ops, rec)
		case "push":
			h.Pushes = append(h.Pushes, rec)
		case "hook":
			h.Hooks = append(h.Hooks, rec)
		case "fault":
			h.Faults = append(h.Faults, rec)
		case "final":
			h.Finals[rec.User] = rec.Entries
			h.FinalCalls[rec.User] = [2]float64{rec.Call, derefOr(rec.Ret, rec.Call)}
		case "finalStream":
			h.Streams[rec.Group] = rec.Messages
			h.StreamCalls[rec.Group] = [2]float64{rec.Call, derefOr(rec.Ret, rec.Call)}
		case "deadletters":
			h.DeadLetters += rec.Count
		default:
			return nil, fmt.Errorf("line %d: unknown record type %q", line, rec.T)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawMeta {
		return nil, fmt.Errorf("no meta record")
	}
	sort.SliceStable(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	return h, nil
}

func derefOr(p *float64, v float64) float64 {
	if p == nil {
		return v
	}
	return *p
}

// reply is the part of a reply frame every op has.
type reply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error,omitempty"`
}

func (r *Record) reply() (reply, bool) {
	var rep reply
	if r.Ret == nil || len(r.Res) == 0 {
		return rep, false
	}
	if err := json.Unmarshal(r.Res, &rep); err != nil {
		return rep, false
	}
	return rep, true
}

func (r *Record) ok() bool {
	rep, answered := r.reply()
	return answered && rep.OK
}

func decode[T any](raw json.RawMessage) (T, bool) {
	var v T
	if len(raw) == 0 {
		return v, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false
	}
	return v, true
}
