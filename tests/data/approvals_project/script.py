import sys


def main():
    print("hello", sys.argv[1:])


main()
