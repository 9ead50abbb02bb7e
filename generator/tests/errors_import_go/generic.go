// +groupName=example.com
package v1

// Box is generic.
type Box[T any] struct { //~ ERROR generic type `Box`
	Item T `json:"item"`
}

// Spec uses an instantiation.
type Spec struct {
	Boxed Box[string] `json:"boxed"` //~ ERROR has no Rust equivalent
	Ch chan int `json:"ch"` //~ ERROR has no Rust equivalent
}

// Thing is the kind: what it reaches is ported, and its errors are reported.
// +kubebuilder:object:root=true
type Thing struct { //~ WARNING does not embed both metav1.TypeMeta and metav1.ObjectMeta
	Spec Spec `json:"spec"`
}
