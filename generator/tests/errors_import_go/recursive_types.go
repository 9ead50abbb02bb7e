// +groupName=example.com
package v1

// Every shape of a type that contains itself: a CRD schema cannot be recursive, so each
// is an error at the reference that closes the loop (issue 30, item 7).
type Spec struct {
	Direct Direct `json:"direct"`
	Ptr    *Ptr   `json:"ptr,omitempty"`
	List   List   `json:"list"`
	Mapped Mapped `json:"mapped"`
	A      A      `json:"a"`
	Alias  Alias  `json:"alias"`
	Embed  Embed  `json:"embed"`
}

type Direct struct {
	Next Direct `json:"next"` //~ ERROR type `Direct` contains itself: Direct -> Direct
}

type Ptr struct {
	Next *Ptr `json:"next,omitempty"` //~ ERROR type `Ptr` contains itself: Ptr -> Ptr
}

type List struct {
	Items []List `json:"items"` //~ ERROR type `List` contains itself: List -> List
}

type Mapped struct {
	M map[string]Mapped `json:"m"` //~ ERROR type `Mapped` contains itself: Mapped -> Mapped
}

type A struct {
	B B `json:"b"`
}

type B struct {
	A *A `json:"a"` //~ ERROR type `A` contains itself: A -> B -> A
}

type Alias []Alias //~ ERROR type `Alias` contains itself: Alias -> Alias

type Embed struct {
	*Embed `json:",inline"` //~ ERROR type `Embed` contains itself: Embed -> Embed
	X      string           `json:"x"`
}

// Thing is the kind.
// +kubebuilder:object:root=true
type Thing struct {
	Spec Spec `json:"spec"`
}
