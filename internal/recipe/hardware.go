package recipe

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpulint/gpulint/internal/normalize"
	"github.com/gpulint/gpulint/internal/value"
)

// Hardware is what a recipe's leading comment says it was written for:
// "# Config for 16 nodes of 8 H100s with FSDP1", as the open-r1 recipes
// open (huggingface/open-r1 recipes/OlympicCoder-32B/sft/config_v00.00.yaml
// at 1416fa0c; recipes/README.md gives the same setup as the command the
// authors ran: 16 nodes, --accelerator fsdp). A comment is prose, not a
// setting the launcher reads: the linter takes it as an assumed input,
// never as a stated one.
type Hardware struct {
	// Nodes and GPUsPerNode are the node count (1 when the comment names
	// none) and the GPUs of each node; GPUsPerNode is 0 when a statement
	// in the recipe's body names the GPU without a count ("tested on
	// A6000").
	Nodes, GPUsPerNode int
	// GPU is the name the catalog resolved (resolve's answer); Written is
	// the GPU as the comment writes it, memory included ("H100s (80GB)").
	GPU, Written string
	// Variants are the catalog GPUs the comment may mean when it names a
	// GPU without the memory that tells its variants apart ("8xA100":
	// A100-40GB or A100-80GB, PCIe or SXM), least memory first; GPU is
	// the first. Nil when the name picks one GPU.
	Variants []string
	// Total is the GPU count of a statement that spreads its GPUs over
	// machines it does not count ("16xH100 machines"): Nodes and
	// GPUsPerNode are 0 then.
	Total int
	// Or are the other setups a statement names as alternatives to this
	// one ("tested on 8xA100 machine and 16xH100 machines"), each with
	// its own GPU, variants and count; their positions are this one's.
	Or []Hardware
	// Sharding is the scheme the comment names, zero when it names none.
	Sharding Sharding
	// Line is the comment's 1-based line; Start and End are the byte
	// offsets in the file of the statement (the text after "# ").
	Line, Start, End int
}

// GPUs is the world size the comment states: nodes × GPUs per node.
func (h Hardware) GPUs() int {
	if h.Total > 0 {
		return h.Total
	}
	return h.Nodes * h.GPUsPerNode
}

// Named is the GPU as the statement names it: the catalog GPU, or, when
// the name leaves the memory that tells its variants apart unstated, the
// name as written and so marked ("A100 (memory unstated)").
func (h Hardware) Named() string {
	if len(h.Variants) > 1 {
		return strings.TrimSuffix(strings.TrimSuffix(h.Written, "s"), "S") + " (memory unstated)"
	}
	return h.GPU
}

// String renders the statement as gpulint reads it: "16 nodes × 8 H100,
// FSDP1 full shard".
func (h Hardware) String() string {
	gpu := h.Named()
	s := fmt.Sprintf("%d× %s", h.GPUsPerNode, gpu)
	switch {
	case h.Total > 0:
		s = fmt.Sprintf("%d× %s over machines it does not count", h.Total, gpu)
	case h.GPUsPerNode == 0:
		s = gpu + " (count unstated)"
	case h.Nodes > 1:
		s = fmt.Sprintf("%d nodes × %d %s", h.Nodes, h.GPUsPerNode, gpu)
	}
	if h.Sharding.Scheme != "" {
		s += ", " + h.Sharding.String()
	}
	return s
}

// Sharding is a named sharding scheme: DeepSpeed ZeRO with its stage, or
// FSDP (full shard: what FSDP1's ShardingStrategy and FSDP2's fully_shard
// do by default) with its version when named.
type Sharding struct {
	Scheme  string // "zero" or "fsdp"; "" when none is named
	Stage   int    // ZeRO stage 1-3; 3 for FSDP's full shard
	Version int    // FSDP 1 or 2; 0 when the comment says only "FSDP"
}

func (s Sharding) String() string {
	switch s.Scheme {
	case "zero":
		return fmt.Sprintf("DeepSpeed ZeRO-%d", s.Stage)
	case "fsdp":
		name := "FSDP"
		if s.Version > 0 {
			name = fmt.Sprintf("FSDP%d", s.Version)
		}
		switch s.Stage {
		case 0:
			return name + " no shard"
		case 2:
			return name + " shard grad op"
		}
		return name + " full shard"
	}
	return ""
}

// hardwareLine is the whole grammar of a hardware statement. A comment
// line must be nothing but the statement: an optional lead ("Config for",
// "Trained on", "For", "This config is only tested on"), an optional node
// count ("16 nodes of", "2 nodes w/"), a GPU count with an optional "x"
// (or an article for one GPU: "an A100 80GB"), a GPU name, an optional
// memory ("(80GB)"), an optional unit ("machine", "nodes") and an optional
// sharding ("with DeepSpeed ZeRO-3", "using FSDP2"). A node count may also
// stand right before the per-node count when the unit is plural ("2 8xH100
// nodes"). A count multiplied into the GPU with a plural unit and no node
// count ("16xH100 machines") is that many GPUs in all, as "8xA100 machine"
// counts the GPUs of one, over machines it does not count (Total); with
// no "x" ("16 H100 machines") the number may count the machines and the
// line does not match. torchtune's configs state their hardware in these "tested on"
// forms (pytorch/torchtune recipes/configs at bd2a0fc: llama3/70B_full.yaml
// "This config is only tested on an 8xA100 machine.", llama3_3/
// 70B_full_multinode.yaml "... on 2 nodes w/ 8 H100 machines.", llama4/
// maverick_17B_128E_full.yaml "... on 2 8xH100 nodes.", mistral/
// 7B_full_ppo_low_memory.yaml "... has been tested on an A100 80GB."). A
// GPU named in passing ("we were unable to train at 32k on 8 H100s", "see
// the H100 results") is not a statement and does not match; a line that
// names several setups is setupsLine's.
var hardwareLine = regexp.MustCompile(`(?i)^` +
	`(?:(?:this\s+(?:config(?:uration)?|recipe)\s+(?:is|was|has\s+been)\s+(?:only\s+)?tested\s+on|` +
	`(?:config(?:uration)?|recipe|setup|settings)\s+(?:for|on)|(?:runs?|ran|trained|train|tested|launched)\s+on|for|on)\s+)?` +
	`(?:(\d{1,4})\s+nodes?\s+(?:of|with|w/|x|×)\s+)?` +
	`(?:(\d{1,4})\s+)?` +
	`(?:(?:an?\s+)?(\d{1,3})\s*([x×*]\s*)?|(an?)\s+)` +
	`([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)` +
	`(?:\s*\(?\s*(\d{1,3})\s*GB\s*\)?)?` +
	`(?:\s+(machines?|nodes?|servers?))?` +
	`(?:\s*,?\s+(?:with|using|via|and|\+)\s+(?:(?:deepspeed\s+)?zero[-_\s]?(?:stage[-_\s]?)?([0-3])|(fsdp)([12])?(?:\s+full[-_\s]shard)?))?` +
	`\s*\.?$`)

// Submatches of hardwareLine.
const (
	hwNodes      = 1 // "16 nodes of"
	hwNodesGlued = 2 // "2" of "2 8xH100 nodes"
	hwCount      = 3 // "8" of "8 H100s" or "an 8xA100 machine"
	hwTimes      = 4 // "x" of "8xA100": the count multiplies the GPU
	hwArticle    = 5 // "an" of "an A100 80GB": one GPU
	hwName       = 6
	hwMemory     = 7
	hwUnit       = 8 // machine(s), node(s), server(s)
	hwZeRO       = 9
	hwFSDP       = 10
	hwFSDPVer    = 11
)

// StatedHardware reads the hardware statement of a recipe's leading
// comment block: the comment lines before its first setting, the first
// one that is a whole statement (hardwareLine) or names several setups
// (setupsLine). When the block states none, a statement in a comment
// anywhere in the recipe is read (bodyLine: "Max size tested on A6000",
// "# up to 8k will work on a single H100" beside a setting), which may
// leave the GPU count unstated (GPUsPerNode 0). resolve maps a GPU name to
// the catalog names it may mean: one for a GPU, several (least memory
// first) for a name without the memory its variants differ by, none when
// the catalog has no such GPU; a plural "s" is dropped before asking, and
// a stated memory is tried first as part of the name ("H100-80GB"). ok is
// false when no line states the hardware.
func StatedHardware(data []byte, resolve func(string) []string) (Hardware, bool) {
	off := 0
	for n := 1; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		line := data[off : off+end]
		lineStart := off
		off += end + 1
		trimmed := bytes.TrimRight(bytes.TrimLeft(line, " \t"), " \t\r")
		if len(trimmed) == 0 || string(trimmed) == "---" {
			continue
		}
		if trimmed[0] != '#' {
			break // the first setting ends the leading block
		}
		text := bytes.TrimLeft(trimmed, "#")
		lead := len(line) - len(bytes.TrimLeft(line, " \t")) + len(trimmed) - len(text)
		stmt := bytes.TrimLeft(text, " \t")
		lead += len(text) - len(stmt)
		h, ok := parseHardware(string(stmt), resolve)
		if !ok {
			h, ok = parseSetups(string(stmt), resolve)
		}
		if !ok {
			continue
		}
		h.Line, h.Start, h.End = n, lineStart+lead, lineStart+lead+len(stmt)
		return h, true
	}
	return bodyHardware(data, comments(data), resolve)
}

// parseHardware matches one comment's text against the grammar and
// resolves its GPU.
func parseHardware(s string, resolve func(string) []string) (Hardware, bool) {
	m := hardwareLine.FindStringSubmatch(s)
	if m == nil {
		return Hardware{}, false
	}
	h := Hardware{Nodes: 1}
	unit := strings.ToLower(m[hwUnit])
	plural := strings.HasSuffix(unit, "s")
	switch {
	case m[hwNodes] != "" && m[hwNodesGlued] != "":
		return Hardware{}, false // two node counts
	case m[hwNodes] != "":
		h.Nodes, _ = strconv.Atoi(m[hwNodes])
	case m[hwNodesGlued] != "":
		// "2 8xH100 nodes": a number before the GPU count counts nodes
		// only when a GPU count follows it and the unit is plural.
		if m[hwCount] == "" || !plural {
			return Hardware{}, false
		}
		h.Nodes, _ = strconv.Atoi(m[hwNodesGlued])
	case plural && m[hwCount] != "" && m[hwTimes] != "":
		// "16xH100 machines": 16 × H100, as "8xA100 machine" counts the
		// GPUs of one, over machines the statement does not count.
		h.Nodes, h.Total = 0, mustAtoi(m[hwCount])
		if h.Total <= 0 || !h.resolveGPU(m[hwName], m[hwMemory], resolve) {
			return Hardware{}, false
		}
		h.Sharding = shardingOf(m[hwZeRO], m[hwFSDP], m[hwFSDPVer])
		return h, true
	case plural:
		// "16 H100 machines" may count machines as well as GPUs.
		return Hardware{}, false
	}
	if m[hwArticle] != "" {
		if plural {
			return Hardware{}, false // "an H100 nodes"
		}
		h.GPUsPerNode = 1
	} else {
		h.GPUsPerNode, _ = strconv.Atoi(m[hwCount])
	}
	if h.Nodes <= 0 || h.GPUsPerNode <= 0 {
		return Hardware{}, false
	}
	if !h.resolveGPU(m[hwName], m[hwMemory], resolve) {
		return Hardware{}, false
	}
	h.Sharding = shardingOf(m[hwZeRO], m[hwFSDP], m[hwFSDPVer])
	return h, true
}

// StatedSharding is the sharding a recipe's own settings give: the ZeRO
// stage of the DeepSpeed config it names (MergeDeepSpeed) or its FSDP
// strategy (normalize.Workload.ApplyFSDP's reading); zero when it states
// none.
func StatedSharding(w *normalize.Workload) Sharding {
	if n, ok := w.Get("zero.stage"); ok {
		if s, ok := n.(int64); ok {
			return Sharding{Scheme: "zero", Stage: int(s)}
		}
	}
	v, _ := w.Get("fsdp.sharding")
	s := strings.ToLower(value.String(v))
	if s == "" {
		return Sharding{}
	}
	sh := Sharding{Scheme: "fsdp", Stage: 3}
	switch s {
	case "no_shard":
		sh.Stage = 0
	case "shard_grad_op", "hybrid_shard_zero2", "_hybrid_shard_zero2":
		sh.Stage = 2
	}
	if ver, _ := w.Get("fsdp.version"); ver == int64(2) {
		sh.Version = 2
	}
	return sh
}

// Agrees reports whether a comment's sharding c says what the recipe's own
// settings s say: the same scheme, the same ZeRO stage, and for FSDP the
// same version where the comment names one. A comment's bare "FSDP" names
// no strategy, so any FSDP strategy agrees with it.
func (s Sharding) Agrees(c Sharding) bool {
	switch {
	case s.Scheme != c.Scheme:
		return false
	case s.Scheme == "zero":
		return s.Stage == c.Stage
	}
	return c.Version == 0 || s.Version == 0 && c.Version == 1 || s.Version == c.Version
}

// mustAtoi is strconv.Atoi for a string a regexp matched as digits.
func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// setupsLine is a leading comment that names several setups the recipe
// was run on, as alternatives: torchtune's llama4/scout_17B_16E_full.yaml
// (pytorch/torchtune at bd2a0fc) says "This config was only tested on
// 8xA100 machine and 16xH100 machines." A lead of testing or running is
// required, and each setup between the separators ("and", "or", ",",
// "/") must be a whole statement of hardwareLine with a count (8xA100
// machine, 16xH100 machines, 2 nodes of 8 H100s). A setup that leaves its
// GPUs uncounted, or a GPU the catalog does not know, makes the line no
// statement: every alternative must be sized for a verdict to stand.
var setupsLine = regexp.MustCompile(`(?i)^` +
	`(?:this\s+(?:config(?:uration)?|recipe)\s+(?:is|was|has\s+been)\s+(?:only\s+)?tested\s+on|` +
	`(?:runs?|ran|trained|tested)\s+on)\s+` +
	`(` + setup + `(?:` + setupSep + setup + `)+)` +
	`\s*\.?$`)

// setup is one setup of setupsLine, parsed again by hardwareLine.
const setup = `(?:(?:\d{1,4}\s+nodes?\s+(?:of|with|w/|x|×)\s+)?(?:an?\s+)?\d{1,3}\s*[x×*]?\s*` +
	`[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?:\s*\(?\s*\d{1,3}\s*GB\s*\)?)?(?:\s+(?:machines?|nodes?|servers?))?)`

// setupSep separates the setups of setupsLine.
const setupSep = `(?:\s*,\s*(?:and\s+|or\s+)?|\s*/\s*|\s+and\s+|\s+or\s+)`

var setupSplit = regexp.MustCompile(`(?i)` + setupSep)

// parseSetups reads a line that names several setups (setupsLine): the
// first setup, with the others in Or.
func parseSetups(s string, resolve func(string) []string) (Hardware, bool) {
	m := setupsLine.FindStringSubmatch(s)
	if m == nil {
		return Hardware{}, false
	}
	var hs []Hardware
	for _, part := range setupSplit.Split(m[1], -1) {
		h, ok := parseHardware(part, resolve)
		if !ok || h.GPUs() == 0 || h.Sharding.Scheme != "" {
			return Hardware{}, false
		}
		hs = append(hs, h)
	}
	if len(hs) < 2 {
		return Hardware{}, false
	}
	h := hs[0]
	h.Or = hs[1:]
	return h, true
}
