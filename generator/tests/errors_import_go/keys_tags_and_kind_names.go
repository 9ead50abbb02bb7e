// +groupName=example.com
package v1

// Map keys that are not strings and two fields of one JSON name (issue 30, item 7).
type Spec struct {
	ByNumber map[int]string     `json:"byNumber,omitempty"` //~ ERROR map keys must be strings in a CRD: `int` is not
	ByCount  map[Count]string   `json:"byCount,omitempty"`  //~ ERROR map keys must be strings in a CRD: `Count` is not
	ByPhase  map[Phase]string   `json:"byPhase,omitempty"`
	Name     string             `json:"name"`
	Other    string             `json:"name"` //~ ERROR fields `Name` and `Other` both serialize as `name`
}

type Count int32

type Phase string

// Thing is a kind.
// +kubebuilder:object:root=true
type Thing struct { //~ WARNING does not embed both metav1.TypeMeta and metav1.ObjectMeta
	Spec Spec `json:"spec"`
}

// Option is a kind whose name no Rust struct in the port can take.
// +kubebuilder:object:root=true
type Option struct { //~ ERROR kind `Option` cannot be ported: it is a name the generated Rust uses
	Spec Spec `json:"spec"`
}
