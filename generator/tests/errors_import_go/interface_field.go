// +groupName=example.com
package v1

// Spec has fields no JSON schema can describe.
type Spec struct {
	Data interface{} `json:"data"` //~ ERROR has no schema
	Other any `json:"other,omitempty"` //~ ERROR has no schema
	// Fine stays fine.
	Fine string `json:"fine"`
}

// Thing is the kind: what it reaches is ported, and its errors are reported.
// +kubebuilder:object:root=true
type Thing struct { //~ WARNING does not embed both metav1.TypeMeta and metav1.ObjectMeta
	Spec Spec `json:"spec"`
}
