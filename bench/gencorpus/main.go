// Command gencorpus writes N config files derived from the corpus in testdata/corpus,
// each with one integer value varied, so benchmarks lint realistic files
// that are all different (no two share a cache key).
//
//	go run ./bench/gencorpus -src testdata/corpus -n 1000 -out bench/out/corpus1000
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// parses reports whether a file is strict JSON (.json) or YAML whose every
// document decodes (others).
func parses(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		var v any
		return json.Unmarshal(data, &v) == nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

var intValue = regexp.MustCompile(`(:\s*)([1-9][0-9]{0,5})(\s*[,\n}])`)

func main() {
	src := flag.String("src", "testdata/corpus", "corpus directory")
	n := flag.Int("n", 1000, "files to write")
	out := flag.String("out", "bench/out/corpus1000", "output directory (replaced)")
	flag.Parse()
	var files []string
	err := filepath.WalkDir(*src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if !d.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "gencorpus: no corpus files under %s: %v\n", *src, err)
		os.Exit(2)
	}
	sort.Strings(files)
	// conftest stops the whole run at the first file it cannot parse, so
	// the benchmark corpus keeps only files strict parsers accept.
	var ok []string
	for _, f := range files {
		if parses(f) {
			ok = append(ok, f)
		}
	}
	fmt.Fprintf(os.Stderr, "gencorpus: %d of %d corpus files parse strictly\n", len(ok), len(files))
	files = ok
	if err := os.RemoveAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
	for i := 0; i < *n; i++ {
		f := files[i%len(files)]
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		round := i / len(files)
		if round > 0 {
			// Vary the round-th integer value (or the first) by the round.
			ms := intValue.FindAllSubmatchIndex(data, -1)
			if len(ms) > 0 {
				m := ms[round%len(ms)]
				v, _ := strconv.Atoi(string(data[m[4]:m[5]]))
				nv := []byte(strconv.Itoa(v + round))
				data = append(append(append([]byte{}, data[:m[4]]...), nv...), data[m[5]:]...)
			}
		}
		kind := filepath.Base(filepath.Dir(f))
		dst := filepath.Join(*out, kind, fmt.Sprintf("%04d-%s", i, filepath.Base(f)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
	}
}
