package main

// The arguments and results of the porcupine operations the partitions are made of.

type sendArgs struct {
	Appinfo  string            `json:"appinfo"`
	To       map[string]string `json:"to"`
	Mentions []string          `json:"mentions"`
}

type sendRes struct {
	Seq       int64 `json:"seq"`
	Duplicate bool  `json:"duplicate"`
}

type seqRes struct {
	Seq int64 `json:"seq"`
}

type syncRes struct {
	Entries []Entry `json:"entries"`
	HasMore bool    `json:"hasMore"`
	HeadSeq int64   `json:"headSeq"`
}

type groupHistoryArgs struct {
	Group      string `json:"group"`
	AfterGseq  *int64 `json:"afterGseq"`
	BeforeGseq *int64 `json:"beforeGseq"`
}

type groupHistoryRes struct {
	Messages []Entry `json:"messages"`
	HasMore  bool    `json:"hasMore"`
}

type controlArgs struct {
	Appinfo string  `json:"appinfo"`
	From    string  `json:"from"`
	EditID  string  `json:"editId"`
	Seqs    []int64 `json:"seqs"`
	Conv    *Conv   `json:"conv"`
	UpToSeq *int64  `json:"upToSeq"`
}

// toConv is the conversation of a send from the sender's side.
