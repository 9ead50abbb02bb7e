// +groupName=example.com
package v1

const (
	First Mode = iota //~ WARNING not a literal
)

// Mode is a number.
type Mode int

// Spec has its own decoding, which the port does not carry.
type Spec struct {
	Inline struct { //~ ERROR anonymous struct
		A string `json:"a"`
	} `json:"inline"`
	NoTag string //~ WARNING has no JSON tag
}

func (s *Spec) UnmarshalJSON(data []byte) error { return nil } //~ WARNING has its own UnmarshalJSON

// Thing is the kind: what it reaches is ported, and its errors are reported.
// +kubebuilder:object:root=true
type Thing struct { //~ WARNING does not embed both metav1.TypeMeta and metav1.ObjectMeta
	Spec Spec `json:"spec"`
}
