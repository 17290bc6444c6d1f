package recipe

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// A recipe states its hardware not only in its leading comment block
// (hardwareLine) but beside the setting the hardware decided, anywhere in
// the file:
//
//	# Max size tested on A6000                 (axolotl-ai-cloud/axolotl
//	micro_batch_size: 1                         examples/archived/falcon/
//	                                            config-7b-qlora.yml at 067b021c)
//	sequence_len: 4096  # up to 8k will work on a single H100
//	                                           (examples/llama-4/
//	                                            scout-qlora-single-h100-flex.yaml)
//
// Such a comment is a hardware statement only when it is one whole
// sentence of this grammar (bodyLine), never when it merely names a GPU:
//
//	statement := [prefix] verb hardware [sharding] ["."]
//	prefix    := up to six words that set no condition, negation or other
//	             subject ("Max size", "up to 8k", "this recipe was")
//	verb      := ["is"|"was"|"has been"|...] ["only"] ("tested"|"trained"|
//	             "run"|"verified"|"validated"|"benchmarked") "on"
//	           | ("will"|"should"|"can"|"does") ("work"|"run"|"fit"|"train") ("on"|"in"|"into")
//	           | ("works"|"runs"|"fits"|"trains") ("on"|"in"|"into")
//	hardware  := [N "nodes of"] [count] [vendor] GPU [memory] ["GPU(s)"] [unit]
//	count     := N ["x"] | "a" | "an" | "a single" | "single" | "one"
//
// Positive: "Max size tested on A6000" (the GPU; the count unstated),
// "up to 8k will work on a single H100" (1 H100), "fits on 2 x A100 80GB",
// "This recipe runs on 8xH100 with ZeRO-3". Negative (each from a real
// recipe or config comment; statement_test.go holds them): "for H100 use
// bf16", "A100: set to 8", "designed for 8 GPUs, so batch size 32" (no
// GPU the catalog knows), "trained on 256 gpus", "= total GPU count (8
// for 8xH100; 2 for 2xB200)" (no verb; two setups), "tested on A100/V100"
// (two GPUs), "doesn't fit on a single A100" (a negation), "if it runs on
// an A100, raise the batch" (a condition, and more after the GPU), "the
// original model was trained on 2048 A100s" (another subject), a URL.
//
// A statement read so is an assumed input like the leading block's, and
// the leading block's own grammar (hardwareLine) wins when it states the
// hardware; when it does not, its lines are read by this grammar too. Statements in
// the body that name different setups state none.

// bodyLine is the grammar of a hardware statement anywhere in a recipe.
var bodyLine = regexp.MustCompile(`(?i)^` +
	`(?:(?P<prefix>(?:[\w.,'’/+-]+\s+){1,6}?))?` +
	`(?:(?:is|are|was|were|has\s+been|have\s+been|been)\s+)?(?:only\s+)?` +
	`(?:(?:tested|trained|run|ran|verified|validated|benchmarked)\s+on|` +
	`(?:will|should|can|does|do)\s+(?:work|run|fit|train)\s+(?:on|into|in)|` +
	`(?:works?|runs?|fits?|trains?)\s+(?:on|into|in))\s+` +
	`(?:(?P<nodes>\d{1,4})\s+nodes?\s+(?:of|with|w/|x|×)\s+)?` +
	`(?:(?:an?\s+)?(?P<count>\d{1,3})\s*(?P<times>[x×*]\s*)?|(?P<one>an?\s+single|an?|single|one)\s+)?` +
	`(?:(?P<vendor>nvidia|rtx|tesla|geforce)[\s-]+)?` +
	`(?P<name>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)` +
	`(?:\s*\(?\s*(?P<memory>\d{1,3})\s*GB\s*\)?)?` +
	`(?:\s+gpus?)?` +
	`(?:\s+(?P<unit>machines?|nodes?|servers?))?` +
	`(?:\s*,?\s+(?:with|using|via|and|\+)\s+(?:(?:deepspeed\s+)?zero[-_\s]?(?:stage[-_\s]?)?(?P<zero>[0-3])|(?P<fsdp>fsdp)(?P<fsdpver>[12])?(?:\s+full[-_\s]shard)?))?` +
	`\s*\.?$`)

// prefixStops are words that, before the verb, make the sentence about
// something other than this recipe's run: a condition ("if it runs on"),
// a negation ("doesn't fit on"), or another subject ("the original model
// was trained on").
var prefixStops = map[string]bool{
	"if": true, "unless": true, "when": true, "whether": true, "else": true, "otherwise": true,
	"not": true, "no": true, "never": true, "cannot": true, "can't": true, "won't": true,
	"doesn't": true, "don't": true, "didn't": true, "isn't": true, "wasn't": true,
	"model": true, "paper": true, "original": true, "pretrained": true, "pre-trained": true,
	"pretraining": true, "authors": true, "they": true, "baseline": true, "reference": true,
	"base": true, "upstream": true,
}

// parseBody matches one comment's text against the body grammar and
// resolves its GPU. A statement that names no count leaves it unstated
// (GPUsPerNode 0).
func parseBody(s string, resolve func(string) []string) (Hardware, bool) {
	m := bodyLine.FindStringSubmatch(s)
	if m == nil {
		return Hardware{}, false
	}
	g := func(name string) string { return m[bodyLine.SubexpIndex(name)] }
	for _, w := range strings.Fields(strings.ToLower(strings.ReplaceAll(g("prefix"), "’", "'"))) {
		if prefixStops[strings.Trim(w, ".,")] || strings.HasSuffix(w, "n't") {
			return Hardware{}, false
		}
	}
	h := Hardware{Nodes: 1}
	plural := strings.HasSuffix(strings.ToLower(g("unit")), "s")
	switch {
	case g("nodes") != "":
		h.Nodes, _ = strconv.Atoi(g("nodes"))
	case plural && g("count") != "" && g("times") != "":
		// "16xH100 machines": 16 GPUs in all (hardwareLine's reading).
		h.Nodes, h.Total = 0, mustAtoi(g("count"))
	case plural:
		return Hardware{}, false // "16 H100 machines" may count machines
	}
	switch {
	case h.Total > 0:
	case g("count") != "":
		h.GPUsPerNode, _ = strconv.Atoi(g("count"))
		if h.GPUsPerNode <= 0 {
			return Hardware{}, false
		}
	case g("one") != "":
		if plural {
			return Hardware{}, false
		}
		h.GPUsPerNode = 1
	case g("nodes") != "":
		return Hardware{}, false // nodes of an uncounted GPU
	}
	if h.Nodes <= 0 && h.Total <= 0 {
		return Hardware{}, false
	}
	name := g("name")
	if v := g("vendor"); v != "" && !strings.EqualFold(v, "nvidia") {
		name = v + "-" + name
	}
	if !h.resolveGPU(name, g("memory"), resolve) {
		if g("vendor") == "" {
			return Hardware{}, false
		}
		if !h.resolveGPU(g("name"), g("memory"), resolve) {
			return Hardware{}, false
		}
	}
	h.Sharding = shardingOf(g("zero"), g("fsdp"), g("fsdpver"))
	return h, true
}

// resolveGPU sets the GPU a name and a stated memory resolve to, trying
// the memory as part of the name first and a plural "s" dropped; false
// when the catalog has no such GPU.
func (h *Hardware) resolveGPU(name, mem string, resolve func(string) []string) bool {
	var names []string
	for _, n := range []string{name, strings.TrimSuffix(strings.TrimSuffix(name, "s"), "S")} {
		if mem != "" {
			names = append(names, n+"-"+mem+"GB")
		}
		names = append(names, n)
	}
	for _, n := range names {
		if gs := resolve(n); len(gs) > 0 {
			h.GPU = gs[0]
			if len(gs) > 1 {
				h.Variants = gs
			}
			h.Written = name
			if mem != "" {
				h.Written += " (" + mem + "GB)"
			}
			return true
		}
	}
	return false
}

// shardingOf reads a statement's named sharding: a ZeRO stage, or FSDP
// with its version.
func shardingOf(zero, fsdp, ver string) Sharding {
	switch {
	case zero != "":
		stage, _ := strconv.Atoi(zero)
		if stage == 0 {
			return Sharding{} // ZeRO-0 shards nothing
		}
		return Sharding{Scheme: "zero", Stage: stage}
	case fsdp != "":
		sh := Sharding{Scheme: "fsdp", Stage: 3}
		if ver != "" {
			sh.Version, _ = strconv.Atoi(ver)
		}
		return sh
	}
	return Sharding{}
}

// comment is the text of one YAML comment: a whole comment line, or the
// comment after a value on its line.
type comment struct {
	line       int // 1-based
	start, end int // byte offsets of the text after "#" and blanks
}

// comments lists a YAML file's comments in order. A "#" inside quotes or
// in a block scalar ("|" or ">") is text, not a comment.
func comments(data []byte) []comment {
	var out []comment
	block := -1 // indentation of the key that opened a block scalar; -1 when none
	off := 0
	for n := 1; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		line := data[off : off+end]
		lineStart := off
		off += end + 1
		body := bytes.TrimRight(line, " \t\r")
		indent := len(line) - len(bytes.TrimLeft(line, " \t"))
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		if block >= 0 {
			if indent > block {
				continue // block scalar text
			}
			block = -1
		}
		if body[indent] == '#' {
			out = append(out, commentAt(data, n, lineStart+indent, lineStart+len(body)))
			continue
		}
		if string(bytes.TrimSpace(body)) == "---" {
			continue
		}
		hash := inlineHash(body[indent:])
		value := body[indent:]
		if hash >= 0 {
			out = append(out, commentAt(data, n, lineStart+indent+hash, lineStart+len(body)))
			value = bytes.TrimRight(value[:hash], " \t")
		}
		if opensBlock(value) {
			block = indent
		}
	}
	return out
}

// commentAt is the comment whose "#" is at hash and whose line ends at end.
func commentAt(data []byte, n, hash, end int) comment {
	start := hash
	for start < end && data[start] == '#' {
		start++
	}
	for start < end && (data[start] == ' ' || data[start] == '\t') {
		start++
	}
	return comment{line: n, start: start, end: end}
}

// inlineHash is the offset of the "#" that starts a comment after a value
// on a YAML line: one after a blank and outside quotes; -1 when none.
func inlineHash(s []byte) int {
	var quote byte
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == ':' || s[i-1] == '[' || s[i-1] == ',' || s[i-1] == '-' {
				quote = c
			}
		case c == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// blockIndicator matches a value that opens a YAML block scalar: "|" or
// ">" with optional chomping and indentation indicators.
var blockIndicator = regexp.MustCompile(`(?:^|[:\-]\s+|^-?\s*)[|>][-+0-9]*$`)

// opensBlock reports whether a line's value (its comment removed) opens
// a block scalar.
func opensBlock(value []byte) bool {
	return blockIndicator.Match(value)
}

// bodyHardware reads the hardware statements of a recipe's comments
// (parseBody), the leading block's included: a "Tested on A6000" there
// states what it states beside a setting. ok is false when there is none,
// or when two name different setups.
func bodyHardware(data []byte, cs []comment, resolve func(string) []string) (Hardware, bool) {
	var first Hardware
	found := false
	for _, c := range cs {
		h, ok := parseBody(string(data[c.start:c.end]), resolve)
		if !ok {
			continue
		}
		h.Line, h.Start, h.End = c.line, c.start, c.end
		if !found {
			first, found = h, true
			continue
		}
		if h.GPU != first.GPU || h.GPUs() != first.GPUs() || h.Sharding != first.Sharding {
			return Hardware{}, false
		}
	}
	return first, found
}
