// Command sharding-vectors prints test vectors for kube-codegen-runtime's shard selectors
// (runtime/tests/sharding.rs), computed by the API server's own code: the hash and the
// range test of k8s.io/apimachinery/pkg/sharding and the parser of
// k8s.io/apiserver/pkg/sharding, both v0.37.2 (Kubernetes 1.37.2, whose kube-apiserver the
// e2e tests run). Regenerate with regen.sh.
package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apiserver/pkg/sharding"
)

type hashVector struct {
	Value string `json:"value"`
	Hash  string `json:"hash"`
}

type matchVector struct {
	Selector  string `json:"selector"`
	UID       string `json:"uid"`
	Namespace string `json:"namespace"`
	Matches   bool   `json:"matches"`
}

type parseVector struct {
	Input string `json:"input"`
	// The selector's canonical form (what the server echoes in shardInfo), if it parsed.
	Canonical *string `json:"canonical"`
	Error     *string `json:"error"`
}

type vectors struct {
	Origin  string        `json:"origin"`
	Hashes  []hashVector  `json:"hashes"`
	Matches []matchVector `json:"matches"`
	Parses  []parseVector `json:"parses"`
}

const top = "0x10000000000000000"

// hex renders n as the API server's bounds: 0x and 16 digits, or the 17-digit 2^64.
func hex(n *big.Int) string { return fmt.Sprintf("0x%016x", n) }

func main() {
	// Values hashed: uids as the API server makes them (UUIDv4, fixed here), namespaces
	// like the ns-0..ns-19, the empty string (a cluster-scoped object's namespace),
	// and bytes outside ASCII (FNV-1a hashes bytes, not characters).
	values := []string{"", "a", "default", "kube-system", "é", "日本", "\x00",
		"0b6f1b5e-6a8e-4c35-9d43-4a2e2f6f6c11", "5f2c7a7e-1d84-4e0b-8f59-1c3a9e0d2b4f",
		"ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000-0000-0000-0000-000000000000"}
	for i := 0; i < 20; i++ {
		values = append(values, fmt.Sprintf("ns-%d", i))
	}
	for i := 0; i < 40; i++ {
		values = append(values, fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i*2654435761%4294967296, i*40503%65536, i*7%4096, i*13%4096, i*1000003))
	}
	v := vectors{Origin: "k8s.io/apimachinery@v0.37.2 pkg/sharding, k8s.io/apiserver@v0.37.2 pkg/sharding; runtime/tests/sharding-vectors/regen.sh"}
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, value := range values {
		h := "0x" + apisharding.HashField(value)
		v.Hashes = append(v.Hashes, hashVector{Value: value, Hash: h})
		n, _ := new(big.Int).SetString(h[2:], 16)
		one := big.NewInt(1)
		below := new(big.Int).Sub(n, one)
		above := new(big.Int).Add(n, one)
		// Ranges with a bound at the hash, one below and one above it, the whole space,
		// and unions: [start, end) must include start and exclude end.
		var bounds [][2]string
		if n.Sign() > 0 {
			bounds = append(bounds, [2]string{"0x0000000000000000", hex(n)}, [2]string{hex(below), hex(n)})
		}
		bounds = append(bounds, [2]string{hex(n), hex(above)}, [2]string{hex(n), top}, [2]string{"0x0000000000000000", top})
		if above.Cmp(two64) < 0 {
			bounds = append(bounds, [2]string{hex(above), top})
		}
		for _, key := range []string{"object.metadata.uid", "object.metadata.namespace"} {
			for _, b := range bounds {
				sel := apisharding.NewSelector(apisharding.ShardRangeRequirement{Key: key, Start: b[0], End: b[1]})
				v.Matches = append(v.Matches, match(sel, value))
			}
			// A union whose second range holds the hash.
			sel := apisharding.NewSelector(
				apisharding.ShardRangeRequirement{Key: key, Start: "0x0000000000000000", End: "0x0000000000000001"},
				apisharding.ShardRangeRequirement{Key: key, Start: hex(n), End: top})
			v.Matches = append(v.Matches, match(sel, value))
		}
	}
	// Three even ranges over the namespaces and 1,000 generated uids.
	thirds := []string{"0x0000000000000000", "0x5555555555555555", "0xaaaaaaaaaaaaaaaa", top}
	for r := 0; r < 3; r++ {
		sel := apisharding.NewSelector(apisharding.ShardRangeRequirement{Key: "object.metadata.namespace", Start: thirds[r], End: thirds[r+1]})
		for i := 0; i < 20; i++ {
			v.Matches = append(v.Matches, match(sel, fmt.Sprintf("ns-%d", i)))
		}
	}
	for _, input := range parseInputs {
		pv := parseVector{Input: input}
		sel, err := sharding.Parse(input)
		if err != nil {
			msg := err.Error()
			pv.Error = &msg
		} else {
			s := sel.String()
			pv.Canonical = &s
		}
		v.Parses = append(v.Parses, pv)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
}

// match runs the API server's own Matches on an object whose uid and namespace are both
// value, so one vector checks the key the selector names.
func match(sel apisharding.Selector, value string) matchVector {
	uid, ns := value, value
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: ns}}
	ok, err := sel.Matches(obj)
	if err != nil {
		panic(err)
	}
	return matchVector{Selector: sel.String(), UID: uid, Namespace: ns, Matches: ok}
}

var parseInputs = []string{
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
	"  shardRange( object.metadata.uid ,'0x0000000000000000','0x8000000000000000' )  ",
	"shardRange(object.metadata.uid,\n  '0x0000000000000000',\n  '0x8000000000000000')",
	"shardRange(object.metadata.uid, \"0x0000000000000000\", \"0x8000000000000000\")",
	"(shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')) || (shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000'))",
	"shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000001') || shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000001')",
	// Errors.
	"",
	"   ",
	"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'",
	"shardRange(object.metadata.uid, '0x0000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000', '0x1')",
	"shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x100000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0X8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000ABC')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x')",
	"shardRange(object.metadata.uid, 0, '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') && shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
	"hashRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
	"object.metadata.uid",
	"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') ||",
	"shardRange(object.metadata['uid'], '0x0000000000000000', '0x8000000000000000')",
	"shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')",
}
