package tuner

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
)

// MaxSafetensorsHeader bounds the JSON header ModelFromDir will read from one
// file. The safetensors format caps headers at 100 MB; anything larger is
// treated as a corrupt file.
const MaxSafetensorsHeader = 100 << 20

// Checkpoint summarizes a safetensors checkpoint, read from headers only.
type Checkpoint struct {
	Files   []string         // safetensors files read, sorted
	Tensors int              // tensor count
	Params  int64            // elements over all tensors
	Bytes   int64            // tensor bytes over all tensors (from data_offsets)
	ByDtype map[string]int64 // elements per safetensors dtype (BF16, F16, F32, I32, U8, F8_E4M3, ...)
}

// DominantDtype is the dtype holding the most elements.
func (c Checkpoint) DominantDtype() string {
	best, bestN := "", int64(-1)
	for _, k := range sortedKeys(c.ByDtype) {
		if c.ByDtype[k] > bestN {
			best, bestN = k, c.ByDtype[k]
		}
	}
	return best
}

// ModelFromDir reads a Hugging Face model directory: config.json (required)
// and, when present, the headers of its *.safetensors files (listed by
// model.safetensors.index.json when that exists). Only each file's 8-byte
// length prefix and JSON header are read, never the weights. For an
// unquantized checkpoint the exact element count becomes Model.ExactParams
// and the dominant dtype Model.Dtype; for a quantized one (packed integer
// tensors) the count is not a parameter count and only Model.Checkpoint is
// set.
func ModelFromDir(fsys fs.FS) (*Model, error) {
	data, err := fs.ReadFile(fsys, "config.json")
	if err != nil {
		return nil, fmt.Errorf("read model dir: %w", err)
	}
	m, err := ModelFromHFConfig(data)
	if err != nil {
		return nil, err
	}
	files, err := safetensorsFiles(fsys)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return m, nil
	}
	ck := &Checkpoint{Files: files, ByDtype: map[string]int64{}}
	for _, f := range files {
		if err := readSafetensorsHeader(fsys, f, ck); err != nil {
			return nil, err
		}
	}
	m.Checkpoint = ck
	if m.Quant == nil {
		m.ExactParams = ck.Params
		switch ck.DominantDtype() {
		case "BF16":
			m.Dtype = "bfloat16"
		case "F16":
			m.Dtype = "float16"
		case "F32":
			m.Dtype = "float32"
		}
	}
	return m, nil
}

func safetensorsFiles(fsys fs.FS) ([]string, error) {
	idx, err := fs.ReadFile(fsys, "model.safetensors.index.json")
	switch {
	case err == nil:
		var index struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(idx, &index); err != nil {
			return nil, fmt.Errorf("parse model.safetensors.index.json: %w", err)
		}
		seen := map[string]bool{}
		var files []string
		for _, f := range index.WeightMap {
			if clean := path.Clean(f); !seen[clean] {
				if !fs.ValidPath(clean) {
					return nil, fmt.Errorf("model.safetensors.index.json: invalid file name %q", f)
				}
				seen[clean] = true
				files = append(files, clean)
			}
		}
		sort.Strings(files)
		return files, nil
	case errors.Is(err, fs.ErrNotExist):
		files, err := fs.Glob(fsys, "*.safetensors")
		if err != nil {
			return nil, fmt.Errorf("list safetensors: %w", err)
		}
		sort.Strings(files)
		return files, nil
	default:
		return nil, fmt.Errorf("read model.safetensors.index.json: %w", err)
	}
}

type tensorInfo struct {
	Dtype       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// readSafetensorsHeader reads the 8-byte little-endian header length and the
// JSON header of one file and adds its tensors to ck.
func readSafetensorsHeader(fsys fs.FS, name string, ck *Checkpoint) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return fmt.Errorf("read %s header length: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n == 0 || n > MaxSafetensorsHeader {
		return fmt.Errorf("%s: header length %d is outside 1..%d", name, n, MaxSafetensorsHeader)
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(f, header); err != nil {
		return fmt.Errorf("read %s header: %w", name, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		return fmt.Errorf("parse %s header: %w", name, err)
	}
	for _, key := range sortedKeys(raw) {
		if key == "__metadata__" {
			continue
		}
		var t tensorInfo
		if err := json.Unmarshal(raw[key], &t); err != nil {
			return fmt.Errorf("%s: tensor %s: %w", name, key, err)
		}
		if len(t.DataOffsets) != 2 || t.DataOffsets[1] < t.DataOffsets[0] || t.Dtype == "" {
			return fmt.Errorf("%s: tensor %s: bad dtype or data_offsets", name, key)
		}
		elems := int64(1)
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("%s: tensor %s: negative dimension", name, key)
			}
			elems *= d
		}
		ck.Tensors++
		ck.Params += elems
		ck.Bytes += t.DataOffsets[1] - t.DataOffsets[0]
		ck.ByDtype[t.Dtype] += elems
	}
	return nil
}
